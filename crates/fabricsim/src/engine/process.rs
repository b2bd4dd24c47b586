//! This process's memory, from `/proc/self/status` (Linux; nothing
//! elsewhere): the checker's progress and peak, and the memory budget.

/// The value in KiB of `key` (e.g. `"VmRSS:"`) in a `/proc/self/status` text.
pub fn status_kb(status: &str, key: &str) -> Option<u64> {
    status.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
}

/// `key` of this process's status now, in KiB (0 where there is none).
pub fn self_status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status").ok().and_then(|s| status_kb(&s, key)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_field_is_read_in_kib() {
        let s = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(
            (status_kb(s, "VmRSS:"), status_kb(s, "VmHWM:"), status_kb(s, "VmData:")),
            (Some(1024), Some(2048), None)
        );
    }
}
