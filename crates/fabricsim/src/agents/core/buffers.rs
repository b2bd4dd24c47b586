//! The timing front end's store buffer and write-combining buffers: which
//! entry may perform after which (the memory model's ordering rules), and
//! when a full buffer frees an entry.
//!
//! The store buffer's own order (a store or sfence after an older one) is
//! the shared rule of `store_buffer.rs`; only the container differs. Here
//! the window, the store buffer and the write-combining buffers are one
//! kind of queue of timed entries, searched together by instruction index
//! (`Core::find`, `Core::ready`, `Core::left`) and left from the middle as
//! entries complete out of order; the checked cores' `StoreBuffer` holds
//! time-free entries and drains from its head. Making these queues
//! `StoreBuffer`s would split those shared paths in two for no gain.

use std::collections::VecDeque;

use super::store_buffer::{drains_after, Class};
use super::{Entry, Kind, Model, Order, State};
use crate::engine::Time;

/// Retired stores and sfences (the store buffer), or non-temporal stores
/// (the write-combining buffers), in program order.
pub(super) type Buffer<T> = VecDeque<Entry<T>>;

/// The earliest time an entry of a full buffer is known to free, or None
/// while none has completed.
pub(super) fn frees_at<T>(b: &Buffer<T>) -> Option<Time> {
    b.iter()
        .filter_map(|e| match e.state {
            State::Done(t) => Some(t),
            _ => None,
        })
        .min()
}

/// Whether `y` may not issue before the older `x` completes: the ordering
/// rules of the core, for every kind of entry (window, store buffer,
/// write-combining buffer). `x.seq < y.seq`.
pub(super) fn waits_for<T>(x: &Entry<T>, y: &Entry<T>, model: Model) -> bool {
    let x_window = matches!(x.kind, Kind::Load | Kind::Rmw | Kind::Mfence);
    let barrier = barrier(x, model);
    match y.kind {
        Kind::Load => y.dep == Some(x.seq) || barrier,
        Kind::Rmw => {
            y.dep == Some(x.seq) || barrier || model == Model::Tso || (model == Model::Rc && y.order == Order::Release)
        }
        Kind::Mfence | Kind::Sfence => true,
        // a store performs after it retires (every older window entry
        // completed), under TSO after every older store, under RC after
        // every older sfence, or everything older when it is a release
        Kind::Store => match x.kind {
            Kind::Store | Kind::Sfence => drains_after(model, class(x), class(y), false),
            _ => x_window || (model == Model::Rc && y.order == Order::Release),
        },
        Kind::WcStore => x_window || x.kind == Kind::Sfence,
        Kind::Compute => false,
    }
}

/// Whether `x` holds every younger load (a load waits for nothing else
/// but its producer: `Core::ready`'s short cut when the window has none).
#[inline]
pub(super) fn barrier<T>(x: &Entry<T>, model: Model) -> bool {
    match x.kind {
        Kind::Mfence => true,
        Kind::Rmw => model == Model::Tso || x.order == Order::Acquire,
        Kind::Load => model == Model::Rc && x.order == Order::Acquire,
        _ => false,
    }
}

/// A store buffer entry's class (the front end knows no locations).
#[inline]
fn class<T>(e: &Entry<T>) -> Class {
    match (e.kind, e.order) {
        (Kind::Sfence, _) => Class::Fence,
        (_, Order::Release) => Class::Release,
        _ => Class::Store,
    }
}
