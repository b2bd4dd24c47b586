//! Packing BI's states for the checker's visited set.

use super::home::{HBusy, HKind, HLine, Home};
use super::protocol::{Busy, Core, Ghost, Kind, LLine, Llc, Mp, Msg, Node, PLine, Pend, Phase, Run, Snp, Tag, Wait, P};
use crate::engine::pack::{get_byte, get_varint, put_varint, Pack};
use crate::{pack_enum, pack_struct};

pack_enum!(P { S, E, M });
pack_enum!(Phase {
    Prep,
    PrepFence,
    Measure,
    MeasureFence,
    Reread,
    RereadFence,
    Done,
    Load,
    Flushing,
    FlushFence,
    Idle,
    AggrFlush,
    AggrFence
});
pack_struct!(PLine { st, val });
pack_struct!(Run {
    phase,
    i,
    cur,
    flushed,
    rep,
    t0,
    t_end,
    total,
    ops,
    reread,
    rng,
    clock,
    next_flush,
    since_flush,
    prev,
    idle,
    flush_total,
    flushes,
    flush_t0
});
pack_enum!(Mp { I, S, M });
pack_struct!(Snp { acks, inv });
pack_struct!(LLine { sharers, owner, dirty, val, busy, mp, snoop });
pack_struct!(HLine { owner, sharers, busy });
pack_struct!(Home { mem, dir });
pack_struct!(Pend { line, acks, dirty, val, flush_req, writing });
pack_struct!(Llc { lines, pend });

impl Pack for Tag {
    fn pack(&self, _out: &mut Vec<u8>) {}
    fn unpack(_src: &mut &[u8]) -> Self {
        Tag
    }
}

impl Pack for Ghost {
    fn pack(&self, out: &mut Vec<u8>) {
        self.last.pack(out);
    }
    fn unpack(src: &mut &[u8]) -> Self {
        Ghost { last: Pack::unpack(src), world: None }
    }
}

impl Pack for HKind {
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(match self {
            HKind::GetS => 0,
            HKind::GetM => 1,
            HKind::Flush { inv: false } => 2,
            HKind::Flush { inv: true } => 3,
        });
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => HKind::GetS,
            1 => HKind::GetM,
            b => HKind::Flush { inv: b == 3 },
        }
    }
}

impl Pack for HBusy {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            HBusy::None => out.push(0),
            HBusy::Snoop { req, kind, acks, data } => {
                out.extend_from_slice(&[1, req, acks]);
                kind.pack(out);
                data.pack(out);
            }
            HBusy::Grant { req } => out.extend_from_slice(&[2, req]),
        }
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => HBusy::None,
            1 => {
                let (req, acks) = (get_byte(src), get_byte(src));
                HBusy::Snoop { req, acks, kind: Pack::unpack(src), data: Pack::unpack(src) }
            }
            _ => HBusy::Grant { req: get_byte(src) },
        }
    }
}

impl Pack for Wait {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Wait::None => out.push(0),
            Wait::Miss { line, store, id } => {
                out.push(1);
                line.pack(out);
                store.pack(out);
                id.pack(out);
            }
            Wait::Clflush { line } => {
                out.push(2);
                line.pack(out);
            }
        }
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Wait::None,
            1 => Wait::Miss { line: Pack::unpack(src), store: Pack::unpack(src), id: Pack::unpack(src) },
            _ => Wait::Clflush { line: Pack::unpack(src) },
        }
    }
}

impl Pack for Kind {
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(match self {
            Kind::GetS => 0,
            Kind::GetM => 1,
            Kind::Flush { inv: false } => 2,
            Kind::Flush { inv: true } => 3,
        });
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Kind::GetS,
            1 => Kind::GetM,
            b => Kind::Flush { inv: b == 3 },
        }
    }
}

impl Pack for Busy {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Busy::None => out.push(0),
            Busy::Mem { req, write } => {
                out.extend_from_slice(&[1, req, write as u8]);
            }
            Busy::Collect { req, kind, acks } => {
                out.extend_from_slice(&[2, req, acks]);
                kind.pack(out);
            }
            Busy::Wb { req, inv } => out.extend_from_slice(&[3, req, inv as u8]),
            Busy::Home { req } => out.extend_from_slice(&[4, req]),
        }
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Busy::None,
            1 => Busy::Mem { req: get_byte(src), write: get_byte(src) == 1 },
            2 => {
                let (req, acks) = (get_byte(src), get_byte(src));
                Busy::Collect { req, acks, kind: Pack::unpack(src) }
            }
            3 => Busy::Wb { req: get_byte(src), inv: get_byte(src) == 1 },
            _ => Busy::Home { req: get_byte(src) },
        }
    }
}

impl Pack for Core {
    fn pack(&self, out: &mut Vec<u8>) {
        self.l1.pack(out);
        self.l2.pack(out);
        put_varint(out, self.wb.len() as u64);
        for &(l, v, n) in &self.wb {
            l.pack(out);
            v.pack(out);
            out.push(n);
        }
        self.flushing.pack(out);
        self.loads.pack(out);
        self.wait.pack(out);
        self.last.pack(out);
        self.ids.pack(out);
        self.run.pack(out);
    }
    fn unpack(src: &mut &[u8]) -> Self {
        let l1 = Pack::unpack(src);
        let l2 = Pack::unpack(src);
        let n = get_varint(src) as usize;
        let wb = (0..n).map(|_| (Pack::unpack(src), Pack::unpack(src), get_byte(src))).collect();
        Core {
            l1,
            l2,
            wb,
            flushing: Pack::unpack(src),
            loads: Pack::unpack(src),
            wait: Pack::unpack(src),
            last: Pack::unpack(src),
            ids: Pack::unpack(src),
            run: Pack::unpack(src),
            prog: None,
        }
    }
}

impl Pack for Node {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Node::Core(c) => {
                out.push(0);
                c.pack(out);
            }
            Node::Llc(l) => {
                out.push(1);
                l.pack(out);
            }
            Node::Mem(m) => {
                out.push(2);
                m.pack(out);
            }
            Node::Home(h) => {
                out.push(3);
                h.pack(out);
            }
        }
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Node::Core(Pack::unpack(src)),
            1 => Node::Llc(Pack::unpack(src)),
            2 => Node::Mem(Pack::unpack(src)),
            3 => Node::Home(Pack::unpack(src)),
            b => panic!("{b} is not a packed BI node"),
        }
    }
}

impl Pack for Msg {
    fn pack(&self, out: &mut Vec<u8>) {
        let (tag, line, a, b): (u8, u64, u64, u64) = match *self {
            Msg::GetS { line } => (0, line, 0, 0),
            Msg::GetM { line } => (1, line, 0, 0),
            Msg::PutM { line, val } => (2, line, val as u64, 0),
            Msg::Flush { line, inv, data } => (3, line, inv as u64, data.map_or(0, |v| v as u64 + 1)),
            Msg::Data { line, val, excl } => (4, line, val as u64, excl as u64),
            Msg::Inv { line, keep } => (5, line, keep as u64, 0),
            Msg::PutAck { line } => (6, line, 0, 0),
            Msg::FlushAck { line } => (7, line, 0, 0),
            Msg::Ack { line, data, kept } => (8, line, data.map_or(0, |v| v as u64 + 1), kept as u64),
            Msg::MemRd { line } => (9, line, 0, 0),
            Msg::MemWr { line, val } => (10, line, val as u64, 0),
            Msg::MemData { line, val } => (11, line, val as u64, 0),
            Msg::MemWrAck { line } => (12, line, 0, 0),
            Msg::MemRdX { line } => (13, line, 0, 0),
            Msg::MemFlush { line, inv } => (14, line, inv as u64, 0),
            Msg::Grant { line, val, excl } => (15, line, val as u64, excl as u64),
            Msg::MemFlushAck { line } => (16, line, 0, 0),
            Msg::Snoop { line, inv } => (17, line, inv as u64, 0),
            Msg::SnoopAck { line, data } => (18, line, data.map_or(0, |v| v as u64 + 1), 0),
            Msg::MemDone { line } => (19, line, 0, 0),
            Msg::Delegate { line, insert } => (20, line, insert as u64, 0),
            Msg::Delegated { line } => (21, line, 0, 0),
        };
        out.push(tag);
        put_varint(out, line);
        put_varint(out, a);
        put_varint(out, b);
    }
    fn unpack(src: &mut &[u8]) -> Self {
        let tag = get_byte(src);
        let line = get_varint(src);
        let a = get_varint(src);
        let b = get_varint(src);
        let opt = |x: u64| (x > 0).then(|| (x - 1) as u32);
        match tag {
            0 => Msg::GetS { line },
            1 => Msg::GetM { line },
            2 => Msg::PutM { line, val: a as u32 },
            3 => Msg::Flush { line, inv: a == 1, data: opt(b) },
            4 => Msg::Data { line, val: a as u32, excl: b == 1 },
            5 => Msg::Inv { line, keep: a == 1 },
            6 => Msg::PutAck { line },
            7 => Msg::FlushAck { line },
            8 => Msg::Ack { line, data: opt(a), kept: b == 1 },
            9 => Msg::MemRd { line },
            10 => Msg::MemWr { line, val: a as u32 },
            11 => Msg::MemData { line, val: a as u32 },
            12 => Msg::MemWrAck { line },
            13 => Msg::MemRdX { line },
            14 => Msg::MemFlush { line, inv: a == 1 },
            15 => Msg::Grant { line, val: a as u32, excl: b == 1 },
            16 => Msg::MemFlushAck { line },
            17 => Msg::Snoop { line, inv: a == 1 },
            18 => Msg::SnoopAck { line, data: opt(a) },
            19 => Msg::MemDone { line },
            20 => Msg::Delegate { line, insert: a == 1 },
            _ => Msg::Delegated { line },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pack::round_trip;

    #[test]
    fn messages_round_trip() {
        for m in [
            Msg::Flush { line: 3, inv: true, data: Some(0) },
            Msg::Flush { line: 3, inv: false, data: None },
            Msg::Ack { line: 300, data: Some(7), kept: true },
            Msg::Data { line: 1, val: 2, excl: true },
            Msg::MemWrAck { line: 9 },
            Msg::Grant { line: 2, val: 1, excl: true },
            Msg::SnoopAck { line: 1, data: Some(0) },
            Msg::SnoopAck { line: 1, data: None },
            Msg::MemFlush { line: 0, inv: true },
            Msg::Snoop { line: 1, inv: false },
            Msg::MemDone { line: 5 },
        ] {
            assert_eq!(round_trip(&m).0, m);
        }
    }
}
