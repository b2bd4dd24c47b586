//! Packing GCS's states for the checker's visited set.

use super::blade::{BLine, Blade, Perm, Waiter, Want};
use super::directory::{DEntry, Dir, DirStats};
use super::messages::{Msg, Queue};
use super::protocol::{Ghost, Node};
use super::thread::{St, Thread};
use crate::engine::pack::{get_byte, Pack};
use crate::{pack_enum, pack_struct};

pack_enum!(Perm { I, S, M });
pack_enum!(St { Idle, Wait, Cs, Rel });
pack_struct!(Thread { st, line, write, ops });
pack_enum!(Want { Lock, Page, Word, Unlock });
pack_struct!(Waiter { thread, write, want });
pack_struct!(BLine {
    perm,
    readers,
    writer,
    inv,
    holder,
    queue,
    rcv,
    transferring,
    keep,
    sent,
    pending,
    owed,
    val,
    waiters,
    sleepers
});
pack_struct!(Blade { lines });
pack_struct!(DEntry { state, sharers, holder, fwd, acks, reading });
pack_struct!(DirStats { forwards, transfers, denials, memory_reads });
pack_struct!(Dir { lines, stats });
pack_struct!(Ghost { last });

impl Pack for Queue {
    fn pack(&self, out: &mut Vec<u8>) {
        self.0.pack(out);
    }
    fn unpack(src: &mut &[u8]) -> Self {
        Queue(Pack::unpack(src))
    }
}

impl Pack for Node {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Node::Thread(t) => {
                out.push(0);
                t.pack(out);
            }
            Node::Blade(b) => {
                out.push(1);
                b.pack(out);
            }
            Node::Dir(d) => {
                out.push(2);
                d.pack(out);
            }
            Node::Mem(m) => {
                out.push(3);
                m.pack(out);
            }
        }
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Node::Thread(Pack::unpack(src)),
            1 => Node::Blade(Pack::unpack(src)),
            2 => Node::Dir(Pack::unpack(src)),
            3 => Node::Mem(Pack::unpack(src)),
            b => panic!("{b} is not a packed GCS node"),
        }
    }
}

impl Pack for Msg {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Msg::Acquire { line, write } => {
                out.push(0);
                (line, write).pack(out);
            }
            Msg::Release { line, write, val } => {
                out.push(1);
                (line, (write, val)).pack(out);
            }
            Msg::Granted { line, val } => {
                out.push(2);
                (line, val).pack(out);
            }
            Msg::Released { line } => {
                out.push(3);
                line.pack(out);
            }
            Msg::ReqS { line } => {
                out.push(4);
                line.pack(out);
            }
            Msg::ReqM { line } => {
                out.push(5);
                line.pack(out);
            }
            Msg::PutS { line } => {
                out.push(6);
                line.pack(out);
            }
            Msg::InvAck { line } => {
                out.push(7);
                line.pack(out);
            }
            Msg::Transfer { line, rcv, readers, writer, rest, val, keep } => {
                out.push(8);
                (line, (rcv, (readers, (writer, (rest, (val, keep)))))).pack(out);
            }
            Msg::Grant { line, write, val, queue } => {
                out.push(9);
                (line, (write, (val, queue))).pack(out);
            }
            Msg::Holder { line, queue } => {
                out.push(10);
                (line, queue).pack(out);
            }
            Msg::Fwd { line, from, write } => {
                out.push(11);
                (line, (from, write)).pack(out);
            }
            Msg::Inv { line } => {
                out.push(12);
                line.pack(out);
            }
            Msg::Approved { line } => {
                out.push(13);
                line.pack(out);
            }
            Msg::Deny { line } => {
                out.push(14);
                line.pack(out);
            }
            Msg::Read { line, to, write } => {
                out.push(15);
                (line, (to, write)).pack(out);
            }
            Msg::Wb { line, val } => {
                out.push(16);
                (line, val).pack(out);
            }
            Msg::MemData { line, to, write, val } => {
                out.push(17);
                (line, (to, (write, val))).pack(out);
            }
            Msg::Wake { line } => {
                out.push(18);
                line.pack(out);
            }
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => {
                let (line, write) = Pack::unpack(src);
                Msg::Acquire { line, write }
            }
            1 => {
                let (line, (write, val)) = Pack::unpack(src);
                Msg::Release { line, write, val }
            }
            2 => {
                let (line, val) = Pack::unpack(src);
                Msg::Granted { line, val }
            }
            3 => Msg::Released { line: Pack::unpack(src) },
            4 => Msg::ReqS { line: Pack::unpack(src) },
            5 => Msg::ReqM { line: Pack::unpack(src) },
            6 => Msg::PutS { line: Pack::unpack(src) },
            7 => Msg::InvAck { line: Pack::unpack(src) },
            8 => {
                let (line, (rcv, (readers, (writer, (rest, (val, keep)))))) = Pack::unpack(src);
                Msg::Transfer { line, rcv, readers, writer, rest, val, keep }
            }
            9 => {
                let (line, (write, (val, queue))) = Pack::unpack(src);
                Msg::Grant { line, write, val, queue }
            }
            10 => {
                let (line, queue) = Pack::unpack(src);
                Msg::Holder { line, queue }
            }
            11 => {
                let (line, (from, write)) = Pack::unpack(src);
                Msg::Fwd { line, from, write }
            }
            12 => Msg::Inv { line: Pack::unpack(src) },
            13 => Msg::Approved { line: Pack::unpack(src) },
            14 => Msg::Deny { line: Pack::unpack(src) },
            15 => {
                let (line, (to, write)) = Pack::unpack(src);
                Msg::Read { line, to, write }
            }
            16 => {
                let (line, val) = Pack::unpack(src);
                Msg::Wb { line, val }
            }
            17 => {
                let (line, (to, (write, val))) = Pack::unpack(src);
                Msg::MemData { line, to, write, val }
            }
            18 => Msg::Wake { line: Pack::unpack(src) },
            b => panic!("{b} is not a packed GCS message"),
        }
    }
}
