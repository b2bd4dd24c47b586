//! Packets and their storage.

use crate::engine::Time;

use super::topology::{NodeId, PortId};

pub type PacketId = u32;

/// What a sender says about a packet; the fabric reads nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    pub src: NodeId,
    pub dst: NodeId,
    /// Size on the wire: header plus payload.
    pub bytes: u32,
    /// The payload part of `bytes` (for transmission-efficiency statistics).
    pub payload: u32,
    /// Message class, for traffic accounting.
    pub class: u8,
    /// Virtual-channel class: messages of different classes that could
    /// wait on each other (requests, responses) must use different ones.
    pub vc_class: u8,
}

/// A packet in flight with the fabric's bookkeeping (its message is kept
/// apart, by the same id): one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub(crate) struct Packet {
    pub hdr: PacketHeader,
    /// The next packet in the same output queue (u32::MAX: none).
    pub next: PacketId,
    /// Port the packet arrived on at its current switch (u32::MAX at the source).
    pub in_port: PortId,
    /// The destination's group in the routing table.
    pub group: u32,
    /// Virtual channel of the buffer the packet occupies now.
    pub vc: u16,
    /// Virtual channel of the output queue it waits in / the next link.
    pub out_vc: u16,
    /// Hop-indexed VC level of the next link.
    pub level: u8,
    /// Up*/down* phase (1 after the route turned down); DOR's dimension state.
    pub phase: u8,
    /// When it became eligible to leave its current input FIFO (while it
    /// waits behind the head), then when it joined its output queue.
    pub since: Time,
    /// Total time spent waiting in output queues.
    pub wait: Time,
    /// The flow's part of the hash spread (`RoutingTable::flow_hash`).
    pub flow: u64,
}

/// A slab of packets: indices stay valid while a packet lives, and freed
/// slots are reused, so steady state allocates nothing.
pub(crate) struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
    live: usize,
}

impl<T: Copy> Slab<T> {
    pub fn with_capacity(n: usize) -> Self {
        Self { items: Vec::with_capacity(n), free: Vec::with_capacity(n), live: 0 }
    }

    #[inline]
    pub fn insert(&mut self, v: T) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = v;
                i
            }
            None => {
                self.items.push(v);
                (self.items.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub fn remove(&mut self, i: u32) -> T {
        self.live -= 1;
        self.free.push(i);
        self.items[i as usize]
    }

    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }

    pub fn live(&self) -> usize {
        self.live
    }
}
