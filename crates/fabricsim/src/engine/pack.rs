//! Compact byte encodings of checker states.
//!
//! The explorer keeps each breadth-first layer as one byte arena of packed
//! states rather than as the states themselves: a German state is ~130
//! bytes in memory and ~25 packed, an MSI state with symmetry ~1 KB and
//! under 100 packed. Every type that is part of a checked state (agents,
//! messages, ghost state) implements [`Pack`]; like the fingerprinter, it
//! lives below the agents so a protocol implements it without depending on
//! the checker.
//!
//! An encoding must be *canonical and injective*: equal values give equal
//! bytes and different values different bytes, because the explorer also
//! takes a state's fingerprint from its bytes. Each type's encoding is
//! self-delimiting (`unpack` knows where it ends), so a sequence of them is
//! injective too. Integers are LEB128 varints (signed ones zig-zagged), so
//! the small values states hold take one byte.

use smallvec::SmallVec;

/// A value with a compact byte encoding (see the module comment).
pub trait Pack: Sized {
    /// Append the encoding of `self` to `out`.
    fn pack(&self, out: &mut Vec<u8>);
    /// Read a value that [`Pack::pack`] wrote at the front of `src`, and
    /// move `src` past it. Panics on bytes `pack` did not write.
    fn unpack(src: &mut &[u8]) -> Self;
    /// [`Pack::unpack`] into `self`, reusing its buffers (containers
    /// override it, so decoding a state into scratch space allocates
    /// nothing).
    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        *self = Self::unpack(src);
    }
}

/// Append `x` as a LEB128 varint (one byte below 128).
#[inline(always)]
pub fn put_varint(out: &mut Vec<u8>, x: u64) {
    if x < 0x80 {
        out.push(x as u8);
    } else {
        put_varint_long(out, x);
    }
}

#[cold]
#[inline(never)]
fn put_varint_long(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8 & 0x7f) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Read one byte.
#[inline(always)]
pub fn get_byte(src: &mut &[u8]) -> u8 {
    let (&b, rest) = src.split_first().expect("a packed value ends early");
    *src = rest;
    b
}

/// Read a LEB128 varint.
#[inline(always)]
pub fn get_varint(src: &mut &[u8]) -> u64 {
    let b = get_byte(src);
    if b < 0x80 {
        b as u64
    } else {
        get_varint_long(src, b)
    }
}

#[cold]
#[inline(never)]
fn get_varint_long(src: &mut &[u8], first: u8) -> u64 {
    let mut x = (first & 0x7f) as u64;
    let mut shift = 7;
    loop {
        let b = get_byte(src);
        x |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return x;
        }
        shift += 7;
    }
}

impl Pack for u8 {
    #[inline(always)]
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
    #[inline(always)]
    fn unpack(src: &mut &[u8]) -> Self {
        get_byte(src)
    }
}

impl Pack for bool {
    #[inline(always)]
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    #[inline(always)]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => false,
            1 => true,
            b => panic!("{b} is not a packed bool"),
        }
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Pack for $t {
            #[inline(always)]
            fn pack(&self, out: &mut Vec<u8>) {
                put_varint(out, *self as u64);
            }
            #[inline(always)]
            fn unpack(src: &mut &[u8]) -> Self {
                let x = get_varint(src);
                <$t>::try_from(x).unwrap_or_else(|_| panic!("{x} does not fit {}", stringify!($t)))
            }
        }
    )*};
}
unsigned!(u16, u32, u64, usize);

// Zig-zag: small magnitudes of either sign take one byte.
macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Pack for $t {
            #[inline(always)]
            fn pack(&self, out: &mut Vec<u8>) {
                let x = *self as i64;
                put_varint(out, ((x << 1) ^ (x >> 63)) as u64);
            }
            #[inline(always)]
            fn unpack(src: &mut &[u8]) -> Self {
                let z = get_varint(src);
                let x = (z >> 1) as i64 ^ -((z & 1) as i64);
                <$t>::try_from(x).unwrap_or_else(|_| panic!("{x} does not fit {}", stringify!($t)))
            }
        }
    )*};
}
signed!(i8, i16, i32, i64);

impl<T: Pack> Pack for Option<T> {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(x) => {
                out.push(1);
                x.pack(out);
            }
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => None,
            1 => Some(T::unpack(src)),
            b => panic!("{b} is not a packed Option tag"),
        }
    }
}

impl<A: Pack, B: Pack> Pack for (A, B) {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        self.0.pack(out);
        self.1.pack(out);
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let a = A::unpack(src);
        (a, B::unpack(src))
    }
}

impl<T: Pack, const N: usize> Pack for [T; N] {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        for x in self {
            x.pack(out);
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        std::array::from_fn(|_| T::unpack(src))
    }
}

/// The elements of a sequence in place: the first `len` reuse `v`'s
/// (and their buffers), the rest are pushed.
#[inline]
fn unpack_seq<T: Pack>(len: usize, src: &mut &[u8], v: &mut [T], mut push: impl FnMut(T)) {
    let reuse = len.min(v.len());
    for x in &mut v[..reuse] {
        x.unpack_into(src);
    }
    for _ in reuse..len {
        push(T::unpack(src));
    }
}

impl<T: Pack> Pack for Vec<T> {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for x in self {
            x.pack(out);
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let mut v = Vec::new();
        v.unpack_into(src);
        v
    }
    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        let len = get_varint(src) as usize;
        self.truncate(len);
        let (head, mut tail) = (self.as_mut_slice(), Vec::new());
        unpack_seq(len, src, head, |x| tail.push(x));
        self.append(&mut tail);
    }
}

impl<A: smallvec::Array> Pack for SmallVec<A>
where
    A::Item: Pack,
{
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for x in self {
            x.pack(out);
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let mut v = SmallVec::new();
        v.unpack_into(src);
        v
    }
    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        let len = get_varint(src) as usize;
        self.truncate(len);
        let mut tail: SmallVec<A> = SmallVec::new();
        unpack_seq(len, src, self.as_mut_slice(), |x| tail.push(x));
        self.extend(tail);
    }
}

impl<K: Pack + Ord, V: Pack> Pack for std::collections::BTreeMap<K, V> {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for (k, v) in self {
            k.pack(out);
            v.pack(out);
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let len = get_varint(src) as usize;
        (0..len).map(|_| <(K, V)>::unpack(src)).collect()
    }
}

/// `Pack` for a struct, field by field in the order given (every field
/// must be listed: the encoding must determine the value).
#[macro_export]
macro_rules! pack_struct {
    ($t:ty { $($f:ident),+ $(,)? }) => {
        impl $crate::engine::pack::Pack for $t {
            #[inline]
            fn pack(&self, out: &mut Vec<u8>) {
                $($crate::engine::pack::Pack::pack(&self.$f, out);)+
            }
            #[inline]
            fn unpack(src: &mut &[u8]) -> Self {
                Self { $($f: $crate::engine::pack::Pack::unpack(src)),+ }
            }
        }
    };
}

/// `Pack` for a struct whose fields are mostly at their default values
/// (a core that runs no program, an idle line): a varint bit mask of the
/// fields that differ from `Default`, then only those fields.
#[macro_export]
macro_rules! pack_sparse {
    ($t:ty { $($f:ident),+ $(,)? }) => {
        impl $crate::engine::pack::Pack for $t {
            #[inline]
            fn pack(&self, out: &mut Vec<u8>) {
                let d = <$t as Default>::default();
                let mut mask = 0u64;
                let mut bit = 1u64;
                $(
                    if self.$f != d.$f {
                        mask |= bit;
                    }
                    bit <<= 1;
                )+
                let _ = bit;
                $crate::engine::pack::put_varint(out, mask);
                $(
                    if self.$f != d.$f {
                        $crate::engine::pack::Pack::pack(&self.$f, out);
                    }
                )+
            }
            #[inline]
            fn unpack(src: &mut &[u8]) -> Self {
                let mut v = <$t as Default>::default();
                let mut mask = $crate::engine::pack::get_varint(src);
                $(
                    if mask & 1 == 1 {
                        v.$f = $crate::engine::pack::Pack::unpack(src);
                    }
                    mask >>= 1;
                )+
                let _ = mask;
                v
            }
        }
    };
}

/// `Pack` for an enum without fields (`Copy`, default discriminants), as
/// one byte: its variants in declaration order.
#[macro_export]
macro_rules! pack_enum {
    ($t:ident { $($v:ident),+ $(,)? }) => {
        impl $crate::engine::pack::Pack for $t {
            #[inline]
            fn pack(&self, out: &mut Vec<u8>) {
                out.push(*self as u8);
            }
            #[inline]
            fn unpack(src: &mut &[u8]) -> Self {
                const ALL: &[$t] = &[$($t::$v),+];
                let b = $crate::engine::pack::get_byte(src) as usize;
                debug_assert!(ALL.iter().enumerate().all(|(i, v)| *v as usize == i));
                ALL[b]
            }
        }
    };
}

/// `Pack` then `unpack` (for tests of encodings).
pub fn round_trip<T: Pack>(x: &T) -> (T, usize) {
    let mut out = Vec::new();
    x.pack(&mut out);
    let mut src = &out[..];
    let y = T::unpack(&mut src);
    assert!(src.is_empty(), "unpack left {} of {} bytes", src.len(), out.len());
    (y, out.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum E {
        A,
        B,
        C,
    }
    pack_enum!(E { A, B, C });

    #[derive(Debug, Clone, PartialEq, Default)]
    struct S {
        a: u8,
        b: i64,
        c: Option<u32>,
        d: Vec<(u16, bool)>,
    }
    pack_struct!(S { a, b, c, d });

    #[derive(Debug, Clone, PartialEq, Default)]
    struct Sparse {
        a: u8,
        b: i64,
        c: [u32; 3],
    }
    pack_sparse!(Sparse { a, b, c });

    #[test]
    fn values_round_trip() {
        for x in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            assert_eq!(round_trip(&x).0, x);
        }
        for x in [0i64, 1, -1, 63, -64, 64, i64::MIN, i64::MAX] {
            assert_eq!(round_trip(&x).0, x);
        }
        assert_eq!(round_trip(&-1i64).1, 1);
        for e in [E::A, E::B, E::C] {
            assert_eq!(round_trip(&e), (e, 1));
        }
        let s = S { a: 7, b: -300, c: Some(9), d: vec![(1, true), (600, false)] };
        assert_eq!(round_trip(&s).0, s);
        assert_eq!(round_trip(&S::default()), (S::default(), 4));
        assert_eq!(round_trip(&Sparse::default()), (Sparse::default(), 1));
        let sp = Sparse { a: 0, b: 5, c: [0, 0, 1] };
        assert_eq!(round_trip(&sp), (sp, 5));
        let v: SmallVec<[u16; 2]> = SmallVec::from_slice(&[1, 2, 3, 400]);
        assert_eq!(round_trip(&v).0, v);
    }

    #[test]
    fn containers_reuse_their_elements() {
        let mut out = Vec::new();
        vec![vec![1u8, 2], vec![3]].pack(&mut out);
        let mut v = vec![vec![9u8; 10], vec![], vec![5]];
        let mut src = &out[..];
        v.unpack_into(&mut src);
        assert_eq!(v, vec![vec![1u8, 2], vec![3]]);
        assert!(v[0].capacity() >= 10, "the first element's buffer was reused");
        assert!(src.is_empty());
    }
}
