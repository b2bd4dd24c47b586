//! Packing CORD's states for the checker's frontier (`engine::pack`):
//! field by field; an enum as a kind byte, then its fields.

use super::directory::{Dir, DirStats};
use super::messages::{Msg, Write};
use super::processor::{Buffered, Proc, ProcStats, Unacked};
use super::protocol::{GStore, Ghost, Node};
use super::tables::EpochTable;
use crate::engine::pack::{get_byte, get_varint, put_varint, Pack};

crate::pack_struct!(Write { loc, val, bytes });
crate::pack_struct!(Unacked { ep, dst, loc, touched, op, alias });
crate::pack_struct!(Buffered { loc, release, bytes, id });
crate::pack_sparse!(ProcStats {
    next_id,
    blocked_since,
    ack_wait,
    table_wait,
    releases,
    splits,
    req_notis,
    unacked_high,
    counters_high
});
crate::pack_sparse!(Proc { core, ep, counters, unacked, last_rel, acks, seq, loads, acquiring, sb, stats });
crate::pack_sparse!(DirStats { cnt_high, noti_high, held_high, recycles });
crate::pack_struct!(Dir { mem, cnt, noti, largest, held, stats });
crate::pack_struct!(Ghost { pending });

impl Pack for EpochTable {
    fn pack(&self, out: &mut Vec<u8>) {
        let e = self.entries();
        put_varint(out, e.len() as u64);
        for &(pid, ep, n) in e {
            out.push(pid);
            put_varint(out, ep as u64);
            put_varint(out, n as u64);
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        let len = get_varint(src) as usize;
        let mut t = EpochTable::default();
        for _ in 0..len {
            let pid = get_byte(src);
            let ep = get_varint(src) as u32;
            let n = get_varint(src) as u32;
            t.push_sorted(pid, ep, n);
        }
        t
    }
}

impl Pack for Msg {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Msg::RlxST { w, ep, acked, op } => {
                out.push(0);
                (w, (ep, (acked, op))).pack(out);
            }
            Msg::RelST { w, ep, cnt, prev, noti } => {
                out.push(1);
                (w, (ep, (cnt, (prev, noti)))).pack(out);
            }
            Msg::ReqNoti { ep, cnt, prev, dst } => {
                out.push(2);
                (ep, (cnt, (prev, dst))).pack(out);
            }
            Msg::Noti { pid, ep } => {
                out.push(3);
                (pid, ep).pack(out);
            }
            Msg::Ack { op } => {
                out.push(4);
                out.push(op);
            }
            Msg::RelAck { ep } => {
                out.push(5);
                ep.pack(out);
            }
            Msg::Rd { loc, op } => {
                out.push(6);
                (loc, op).pack(out);
            }
            Msg::RdData { loc, val, op } => {
                out.push(7);
                (loc, (val, op)).pack(out);
            }
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => {
                let (w, (ep, (acked, op))) = Pack::unpack(src);
                Msg::RlxST { w, ep, acked, op }
            }
            1 => {
                let (w, (ep, (cnt, (prev, noti)))) = Pack::unpack(src);
                Msg::RelST { w, ep, cnt, prev, noti }
            }
            2 => {
                let (ep, (cnt, (prev, dst))) = Pack::unpack(src);
                Msg::ReqNoti { ep, cnt, prev, dst }
            }
            3 => {
                let (pid, ep) = Pack::unpack(src);
                Msg::Noti { pid, ep }
            }
            4 => Msg::Ack { op: get_byte(src) },
            5 => Msg::RelAck { ep: Pack::unpack(src) },
            6 => {
                let (loc, op) = Pack::unpack(src);
                Msg::Rd { loc, op }
            }
            7 => {
                let (loc, (val, op)) = Pack::unpack(src);
                Msg::RdData { loc, val, op }
            }
            k => panic!("{k} is not a packed CORD message"),
        }
    }
}

impl Pack for GStore {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            GStore::Rlx { dir, loc } => {
                out.push(0);
                (dir, loc).pack(out);
            }
            GStore::Rel { dir, ep } => {
                out.push(1);
                (dir, ep).pack(out);
            }
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => {
                let (dir, loc) = Pack::unpack(src);
                GStore::Rlx { dir, loc }
            }
            1 => {
                let (dir, ep) = Pack::unpack(src);
                GStore::Rel { dir, ep }
            }
            k => panic!("{k} is not a packed CORD ghost store"),
        }
    }
}

impl Pack for Node {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Node::Proc(p) => {
                out.push(0);
                p.pack(out);
            }
            Node::Dir(d) => {
                out.push(1);
                d.pack(out);
            }
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Node::Proc(Pack::unpack(src)),
            1 => Node::Dir(Pack::unpack(src)),
            k => panic!("{k} is not a packed CORD agent"),
        }
    }
}
