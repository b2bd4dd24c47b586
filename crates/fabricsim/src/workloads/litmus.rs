//! herd7 C litmus parser (in progress).
