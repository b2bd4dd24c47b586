//! Packing the PCIe family's states for the checker's visited set.

use super::dev::Dev;
use super::memory::Mem;
use super::messages::Msg;
use super::nic::{Thread, WcLine};
use super::protocol::{Ghost, Node};
use super::rc::{Entry, Rc, RcStats, St};
use super::rob::{Held, Rob};
use super::switch::{Switch, Waiting};
use crate::engine::pack::{get_byte, Pack};

impl Pack for Msg {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Msg::MemRd { tag, loc, acq } => {
                out.push(0);
                (tag, (loc, acq)).pack(out);
            }
            Msg::Cpl { tag, val } => {
                out.push(1);
                (tag, val).pack(out);
            }
            Msg::Rd { qp, tag, loc } => {
                out.push(2);
                (qp, (tag, loc)).pack(out);
            }
            Msg::Data { qp, tag, val } => {
                out.push(3);
                (qp, (tag, val)).pack(out);
            }
            Msg::Inv { loc } => {
                out.push(4);
                loc.pack(out);
            }
            Msg::HostWr { loc, val } => {
                out.push(5);
                (loc, val).pack(out);
            }
            Msg::HostRd { loc } => {
                out.push(6);
                loc.pack(out);
            }
            Msg::HostData { val } => {
                out.push(7);
                val.pack(out);
            }
            Msg::MmioWr { seq, rel, loc, val } => {
                out.push(8);
                (seq, (rel, (loc, val))).pack(out);
            }
            Msg::MmioAck { rel } => {
                out.push(9);
                rel.pack(out);
            }
            Msg::DevWr { core, seq, rel, loc, val } => {
                out.push(10);
                (core, (seq, (rel, (loc, val)))).pack(out);
            }
            Msg::Fwd { qp, tag, loc, acq } => {
                out.push(11);
                (qp, (tag, (loc, acq))).pack(out);
            }
            Msg::Nack { tag, loc, acq } => {
                out.push(12);
                (tag, (loc, acq)).pack(out);
            }
            Msg::P2pFree => out.push(13),
            Msg::MemWr { tag, loc, val, rel } => {
                out.push(16);
                (tag, (loc, (val, rel))).pack(out);
            }
            Msg::Wr { qp, tag, loc, val } => {
                out.push(17);
                (qp, (tag, (loc, val))).pack(out);
            }
            Msg::WrAck { qp, tag } => {
                out.push(18);
                (qp, tag).pack(out);
            }
            Msg::Retry => out.push(14),
            Msg::Resend { tag, loc, acq } => {
                out.push(15);
                (tag, (loc, acq)).pack(out);
            }
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => {
                let (tag, (loc, acq)) = Pack::unpack(src);
                Msg::MemRd { tag, loc, acq }
            }
            1 => {
                let (tag, val) = Pack::unpack(src);
                Msg::Cpl { tag, val }
            }
            2 => {
                let (qp, (tag, loc)) = Pack::unpack(src);
                Msg::Rd { qp, tag, loc }
            }
            3 => {
                let (qp, (tag, val)) = Pack::unpack(src);
                Msg::Data { qp, tag, val }
            }
            4 => Msg::Inv { loc: Pack::unpack(src) },
            5 => {
                let (loc, val) = Pack::unpack(src);
                Msg::HostWr { loc, val }
            }
            6 => Msg::HostRd { loc: Pack::unpack(src) },
            7 => Msg::HostData { val: Pack::unpack(src) },
            8 => {
                let (seq, (rel, (loc, val))) = Pack::unpack(src);
                Msg::MmioWr { seq, rel, loc, val }
            }
            9 => Msg::MmioAck { rel: Pack::unpack(src) },
            10 => {
                let (core, (seq, (rel, (loc, val)))) = Pack::unpack(src);
                Msg::DevWr { core, seq, rel, loc, val }
            }
            11 => {
                let (qp, (tag, (loc, acq))) = Pack::unpack(src);
                Msg::Fwd { qp, tag, loc, acq }
            }
            12 => {
                let (tag, (loc, acq)) = Pack::unpack(src);
                Msg::Nack { tag, loc, acq }
            }
            13 => Msg::P2pFree,
            16 => {
                let (tag, (loc, (val, rel))) = Pack::unpack(src);
                Msg::MemWr { tag, loc, val, rel }
            }
            17 => {
                let (qp, (tag, (loc, val))) = Pack::unpack(src);
                Msg::Wr { qp, tag, loc, val }
            }
            18 => {
                let (qp, tag) = Pack::unpack(src);
                Msg::WrAck { qp, tag }
            }
            14 => Msg::Retry,
            15 => {
                let (tag, (loc, acq)) = Pack::unpack(src);
                Msg::Resend { tag, loc, acq }
            }
            k => panic!("{k} is not a packed PCIe message"),
        }
    }
}

impl Pack for St {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            St::Waiting => out.push(0),
            St::Reading => out.push(1),
            St::Data(v) => {
                out.push(2);
                v.pack(out);
            }
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => St::Waiting,
            1 => St::Reading,
            2 => St::Data(Pack::unpack(src)),
            k => panic!("{k} is not a packed RLSQ entry state"),
        }
    }
}

crate::pack_struct!(Entry { qp, tag, loc, acq, wr, st });
crate::pack_struct!(RcStats { squashes, rlsq_high });
crate::pack_struct!(Held { core, seq, rel, loc, val });
crate::pack_struct!(Rob { held, next });
crate::pack_struct!(Rc { rlsq, stats, rob });
crate::pack_struct!(Dev { mem, rob });
crate::pack_struct!(Waiting { qp, tag, loc, acq });
crate::pack_struct!(Switch { queue, p2p_busy, waiting, invited, nacks });
crate::pack_struct!(Mem { mem, shared, cached });
crate::pack_struct!(WcLine { seq, rel, loc, val });
crate::pack_struct!(Thread { pc, regs, out, next_tag, wc, seq, unacked, unacked_rel, refused, faa });

impl Pack for Ghost {
    fn pack(&self, _out: &mut Vec<u8>) {}

    fn unpack(_src: &mut &[u8]) -> Self {
        Ghost
    }
}

impl Pack for Node {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Node::Core(t) => {
                out.push(0);
                t.pack(out);
            }
            Node::Rc(rc) => {
                out.push(1);
                rc.pack(out);
            }
            Node::Mem(m) => {
                out.push(2);
                m.pack(out);
            }
            Node::Dev(d) => {
                out.push(3);
                d.pack(out);
            }
            Node::Switch(s) => {
                out.push(4);
                s.pack(out);
            }
            Node::P2p => out.push(5),
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Node::Core(Pack::unpack(src)),
            1 => Node::Rc(Pack::unpack(src)),
            2 => Node::Mem(Pack::unpack(src)),
            3 => Node::Dev(Pack::unpack(src)),
            4 => Node::Switch(Pack::unpack(src)),
            5 => Node::P2p,
            k => panic!("{k} is not a packed PCIe agent"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pack::round_trip;

    #[test]
    fn messages_and_agents_round_trip() {
        for m in [
            Msg::MemRd { tag: 300, loc: 7, acq: true },
            Msg::Cpl { tag: 1, val: 2 },
            Msg::Rd { qp: 3, tag: 9, loc: 1 },
            Msg::Data { qp: 3, tag: 9, val: 1 },
            Msg::Inv { loc: 2 },
            Msg::HostWr { loc: 1, val: 1 },
            Msg::HostRd { loc: 0 },
            Msg::HostData { val: 1 },
            Msg::MmioWr { seq: 7, rel: true, loc: 1, val: 2 },
            Msg::MmioAck { rel: true },
            Msg::DevWr { core: 0, seq: 4, rel: false, loc: 1, val: 2 },
            Msg::Fwd { qp: 2, tag: 5, loc: 1, acq: true },
            Msg::Nack { tag: 5, loc: 1, acq: false },
            Msg::P2pFree,
            Msg::Retry,
            Msg::Resend { tag: 5, loc: 1, acq: true },
            Msg::MemWr { tag: 3, loc: 2, val: 1, rel: true },
            Msg::Wr { qp: 1, tag: 3, loc: 2, val: 1 },
            Msg::WrAck { qp: 1, tag: 3 },
        ] {
            assert_eq!(round_trip(&m).0, m);
        }
        let mut rc = Rc::default();
        rc.rlsq.push(Entry { qp: 1, tag: 2, loc: 3, acq: true, wr: None, st: St::Data(1) });
        rc.rlsq.push(Entry { qp: 1, tag: 4, loc: 3, acq: false, wr: Some((1, true)), st: St::Reading });
        rc.rob.held.push(Held { core: 1, seq: 3, rel: false, loc: 0, val: 1 });
        rc.rob.next.push((1, 2));
        let n = Node::Rc(rc);
        assert_eq!(round_trip(&n).0, n);
        let mut t = Thread::default();
        t.wc.push(WcLine { seq: 1, rel: true, loc: 2, val: 3 });
        t.unacked = 2;
        let n = Node::Core(t);
        assert_eq!(round_trip(&n).0, n);
    }
}
