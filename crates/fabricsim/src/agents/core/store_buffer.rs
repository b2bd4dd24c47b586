//! The store buffer and the write-combining buffers: which entry may
//! perform after which (the memory model's ordering rules), and when a
//! full buffer frees an entry.

use std::collections::VecDeque;

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
    // a barrier holds every younger load
    let barrier = match x.kind {
        Kind::Mfence => true,
        Kind::Rmw => model == Model::Tso || x.order == Order::Acquire,
        Kind::Load => model == Model::Rc && x.order == Order::Acquire,
        _ => false,
    };
    match y.kind {
        Kind::Load => y.dep == Some(x.seq) || barrier,
        Kind::Rmw => {
            y.dep == Some(x.seq) || barrier || model == Model::Tso || (model == Model::Rc && y.order == Order::Release)
        }
        Kind::Mfence | Kind::Sfence => true,
        // a store performs after it retires (every older window entry
        // completed), under TSO after every older store, under RC after
        // every older sfence, or everything older when it is a release
        Kind::Store => {
            x_window
                || x.kind == Kind::Sfence
                || (model == Model::Tso && x.kind == Kind::Store)
                || (model == Model::Rc && y.order == Order::Release)
        }
        Kind::WcStore => x_window || x.kind == Kind::Sfence,
        Kind::Compute => false,
    }
}
