//! GCS's messages and channels.
//!
//! | VC | name    | messages                                         | order |
//! |----|---------|--------------------------------------------------|-------|
//! | 0  | local   | Acquire, Release (thread -> blade); Granted, Released | FIFO |
//! | 1  | req     | ReqS, ReqM, PutS (blade -> switch)                | FIFO  |
//! | 2  | resp    | InvAck, Transfer (blade -> switch)                | FIFO  |
//! | 3  | fwd     | Grant, Holder, Fwd, Inv, Approved, Deny (switch -> blade) | FIFO |
//! | 4  | mem     | Read, Wb (switch -> memory blade)                 | FIFO  |
//! | 5  | memresp | MemData (memory blade -> switch)                  | any   |
//! | 6  | wake    | Wake (blade -> blade: pthread's futex wake-up)    | any   |
//!
//! The switch answers a blade on one ordered channel (MIND's RDMA reliable
//! connections are), so a grant always arrives before an invalidation the
//! switch sent after it, and a forwarded request before a denial. Requests
//! and answers to the switch travel apart, so a request the switch holds
//! back never blocks the acknowledgement it waits for.

use crate::programs::Value;

pub const LOCAL: u8 = 0;
pub const REQ: u8 = 1;
pub const RESP: u8 = 2;
pub const FWD: u8 = 3;
pub const MEM: u8 = 4;
pub const MEMRESP: u8 = 5;
pub const WAKE: u8 = 6;

pub const CHANNELS: [&str; 7] = ["local", "req", "resp", "fwd", "mem", "memresp", "wake"];

/// A directory line: a lock (`0..locks`) or, without combined data, the
/// page holding lock `l`'s region (`locks + l`).
pub type Line = u32;
/// A compute blade, by index.
pub type Blade = u8;

/// A wait queue of blade requests, oldest first, packed in one word so a
/// message carrying it stays `Copy`: the length in the low 4 bits, then 5
/// bits per request (the blade, then whether it asks for M). A blade has
/// at most one request per line outstanding, so a queue holds fewer than
/// [`super::MAX_BLADES`].
/// (Debug: `text.rs`, as a list of blades.)
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Queue(pub u64);

impl Queue {
    pub fn len(self) -> usize {
        (self.0 & 0xf) as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    pub fn get(self, i: usize) -> (Blade, bool) {
        let e = (self.0 >> (4 + 5 * i)) & 0x1f;
        ((e >> 1) as Blade, e & 1 == 1)
    }

    pub fn push(&mut self, blade: Blade, write: bool) {
        let n = self.len();
        debug_assert!(n < super::MAX_BLADES && (blade as usize) < 16);
        let e = ((blade as u64) << 1) | write as u64;
        self.0 = (self.0 & !0xf) | (e << (4 + 5 * n)) | (n as u64 + 1);
    }

    pub fn iter(self) -> impl Iterator<Item = (Blade, bool)> {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// `self` then `other`.
    pub fn append(&mut self, other: Queue) {
        for (b, w) in other.iter() {
            self.push(b, w);
        }
    }

    /// The hand-off of a released line (§3.1.1, FIFO): the readers at the
    /// head (a bit mask of blades), the first writer, and what follows it.
    pub fn split(self) -> (u16, Option<Blade>, Queue) {
        let mut readers = 0u16;
        let mut rest = Queue::default();
        let mut writer = None;
        for (b, w) in self.iter() {
            match (writer, w) {
                (None, false) => readers |= 1 << b,
                (None, true) => writer = Some(b),
                (Some(_), _) => rest.push(b, w),
            }
        }
        (readers, writer, rest)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // thread <-> its blade
    Acquire {
        line: Line,
        write: bool,
    },
    Release {
        line: Line,
        write: bool,
        val: Value,
    },
    Granted {
        line: Line,
        val: Value,
    },
    Released {
        line: Line,
    },
    // blade -> switch: requests
    ReqS {
        line: Line,
    },
    ReqM {
        line: Line,
    },
    /// A reader blade drops its copy (without locality).
    PutS {
        line: Line,
    },
    // blade -> switch: answers
    InvAck {
        line: Line,
    },
    /// The holder hands the line and its queue on: to the `readers` at the
    /// head (S), then the `writer` (M, or the holder of `rest` while the
    /// readers read); the old holder keeps S if `keep`. With no reader and
    /// no writer, the holder gives the line up (eviction). `rcv` counts the
    /// forwarded requests it received.
    Transfer {
        line: Line,
        rcv: u8,
        readers: u16,
        writer: Option<Blade>,
        rest: Queue,
        val: Value,
        keep: bool,
    },
    // switch -> blade
    /// S or M with the region's data (`None`: no data, the lock alone), and
    /// for M the queue that comes with it.
    Grant {
        line: Line,
        write: bool,
        val: Option<Value>,
        queue: Queue,
    },
    /// You hold the queue (as the next writer, case iii) and these requests.
    Holder {
        line: Line,
        queue: Queue,
    },
    Fwd {
        line: Line,
        from: Blade,
        write: bool,
    },
    Inv {
        line: Line,
    },
    Approved {
        line: Line,
    },
    Deny {
        line: Line,
    },
    // switch <-> memory blade
    Read {
        line: Line,
        to: Blade,
        write: bool,
    },
    Wb {
        line: Line,
        val: Value,
    },
    MemData {
        line: Line,
        to: Blade,
        write: bool,
        val: Value,
    },
    /// pthread: a lock word this blade's threads sleep on changed.
    Wake {
        line: Line,
    },
}

impl Msg {
    pub fn line(self) -> Line {
        match self {
            Msg::Acquire { line, .. }
            | Msg::Release { line, .. }
            | Msg::Granted { line, .. }
            | Msg::Released { line }
            | Msg::ReqS { line }
            | Msg::ReqM { line }
            | Msg::PutS { line }
            | Msg::InvAck { line }
            | Msg::Transfer { line, .. }
            | Msg::Grant { line, .. }
            | Msg::Holder { line, .. }
            | Msg::Fwd { line, .. }
            | Msg::Inv { line }
            | Msg::Approved { line }
            | Msg::Deny { line }
            | Msg::Read { line, .. }
            | Msg::Wb { line, .. }
            | Msg::MemData { line, .. }
            | Msg::Wake { line } => line,
        }
    }

    /// Whether it carries the line's data over the network.
    pub fn carries_data(self) -> bool {
        matches!(self, Msg::Transfer { .. } | Msg::Grant { val: Some(_), .. } | Msg::Wb { .. } | Msg::MemData { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::Queue;

    #[test]
    fn a_queue_keeps_its_order_and_splits_at_the_first_writer() {
        let mut q = Queue::default();
        for (b, w) in [(3, false), (0, false), (7, true), (2, false), (11, true)] {
            q.push(b, w);
        }
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![(3, false), (0, false), (7, true), (2, false), (11, true)]);
        let (readers, writer, rest) = q.split();
        assert_eq!(readers, 0b1001);
        assert_eq!(writer, Some(7));
        assert_eq!(rest.iter().collect::<Vec<_>>(), vec![(2, false), (11, true)]);
        let mut full = Queue::default();
        for b in 0..super::super::MAX_BLADES as u8 {
            full.push(b, b % 2 == 1);
        }
        assert_eq!(full.get(11), (11, true));
        assert_eq!(full.len(), 12);
    }
}
