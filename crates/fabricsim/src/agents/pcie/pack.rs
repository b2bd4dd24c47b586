//! Packing the PCIe family's states for the checker's visited set.

use super::dev::Dev;
use super::host::{Home, HostCore, L2};
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
            Msg::Coh(m) => {
                out.push(2);
                m.pack(out);
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
            2 => Msg::Coh(Pack::unpack(src)),
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
            St::Stale(v) => {
                out.push(3);
                v.pack(out);
            }
            St::Owning { data, need, got } => {
                out.push(4);
                (data, (need, got)).pack(out);
            }
            St::Owned => out.push(5),
            St::Committed => out.push(6),
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => St::Waiting,
            1 => St::Reading,
            2 => St::Data(Pack::unpack(src)),
            3 => St::Stale(Pack::unpack(src)),
            4 => {
                let (data, (need, got)) = Pack::unpack(src);
                St::Owning { data, need, got }
            }
            5 => St::Owned,
            6 => St::Committed,
            k => panic!("{k} is not a packed RLSQ entry state"),
        }
    }
}

crate::pack_struct!(Entry { qp, tag, loc, acq, wr, st });
crate::pack_struct!(RcStats { squashes, rlsq_high, invs });
crate::pack_struct!(Held { core, seq, rel, loc, val });
crate::pack_struct!(Rob { held, next });
crate::pack_struct!(Rc { rlsq, stats, rob });
crate::pack_struct!(Dev { mem, rob });
crate::pack_struct!(Waiting { qp, tag, loc, acq });
crate::pack_struct!(Switch { queue, p2p_busy, waiting, invited, nacks });
crate::pack_struct!(HostCore { core, lines });
crate::pack_struct!(Home { lines, l2 });

/// Not packed: the checker keeps no L2 (see `host.rs`).
impl Pack for L2 {
    fn pack(&self, _out: &mut Vec<u8>) {
        debug_assert!(self.0.is_none(), "the checker keeps no L2");
    }

    fn unpack(_src: &mut &[u8]) -> Self {
        L2(None)
    }
}
crate::pack_struct!(WcLine { seq, rel, loc, val });
crate::pack_struct!(Thread { pc, regs, out, next_tag, wc, seq, unacked, unacked_rel, refused, faa });

crate::pack_struct!(Ghost { coh });

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
            Node::Home(h) => {
                out.push(2);
                h.pack(out);
            }
            Node::Host(h) => {
                out.push(6);
                h.pack(out);
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
            2 => Node::Home(Pack::unpack(src)),
            6 => Node::Host(Pack::unpack(src)),
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
            Msg::Coh(crate::agents::coherence::directory::Msg::Inv { loc: 2, req: 3 }),
            Msg::Coh(crate::agents::coherence::directory::Msg::Data { loc: 1, data: 1, acks: 2, excl: false }),
            Msg::MmioWr { seq: 7, rel: true, loc: 1, val: 2 },
            Msg::MmioAck { rel: true },
            Msg::DevWr { core: 0, seq: 4, rel: false, loc: 1, val: 2 },
            Msg::Fwd { qp: 2, tag: 5, loc: 1, acq: true },
            Msg::Nack { tag: 5, loc: 1, acq: false },
            Msg::P2pFree,
            Msg::Retry,
            Msg::Resend { tag: 5, loc: 1, acq: true },
            Msg::MemWr { tag: 3, loc: 2, val: 1, rel: true },
        ] {
            assert_eq!(round_trip(&m).0, m);
        }
        let mut rc = Rc::default();
        rc.rlsq.push(Entry { qp: 1, tag: 2, loc: 3, acq: true, wr: None, st: St::Data(1) });
        rc.rlsq.push(Entry { qp: 1, tag: 4, loc: 3, acq: false, wr: Some((1, true)), st: St::Reading });
        rc.rlsq.push(Entry {
            qp: 1,
            tag: 5,
            loc: 2,
            acq: false,
            wr: Some((1, false)),
            st: St::Owning { data: true, need: 2, got: 1 },
        });
        rc.rlsq.push(Entry { qp: 2, tag: 6, loc: 2, acq: false, wr: None, st: St::Stale(1) });
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
