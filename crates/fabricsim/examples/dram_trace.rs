//! Drive the DRAM component alone with a trace, for the DRAMsim3 side by
//! side (benchmarks/dramsim3_compare.py, docs/dram.md):
//! `dram_trace TRACE [KEY=VALUE...]`
//! TRACE has one request a line, `TIME_PS ADDR R|W` (ADDR in hex or
//! decimal, times non-decreasing); each KEY=VALUE is a `[defaults.memory]`
//! key of a `model = "dram"` memory (TOML values: `dram="DDR4-3200"`,
//! `ranks=2`, `mapping="row:channel:rank:bank:column"`).
//! Requests arrive at their times into a FIFO in front of the channels and
//! enter their channel's read or write queue in arrival order when it has
//! room (as the memory endpoint admits them). Prints one JSON line: reads,
//! writes, mean and median read latency (arrival to last data beat, ns),
//! throughput (all requests' bytes over first arrival to the last read's
//! completion, or the last write's if there are no reads,
//! GB/s) and the DRAM's counters.
use std::collections::VecDeque;

use fabricsim::agents::memory::Dram;
use fabricsim::engine::Time;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.is_empty() {
        eprintln!("usage: dram_trace TRACE [KEY=VALUE...]");
        std::process::exit(2);
    }
    let mut toml = String::from("[defaults.memory]\nmodel = \"dram\"\nlatency = \"0ns\"\n");
    for kv in &a[1..] {
        toml += kv;
        toml.push('\n');
    }
    toml += "[[requester]]\nname = \"r\"\n[[memory]]\nname = \"m\"\n[[link]]\na = \"r\"\nb = \"m\"\n";
    let spec =
        fabricsim::config::resolve(&toml, "dram_trace", fabricsim::Format::Toml, &[], None).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
    let p = spec.memories[0].dram.clone().expect("a DRAM memory");
    let text = std::fs::read_to_string(&a[0]).unwrap_or_else(|e| panic!("{}: {e}", a[0]));
    // (arrival, address, write)
    let mut trace: Vec<(Time, u64, bool)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let bad = || -> ! { panic!("{}:{}: expected `TIME_PS ADDR R|W`, got {line:?}", a[0], n + 1) };
        if f.len() != 3 {
            bad();
        }
        let t: Time = f[0].parse().unwrap_or_else(|_| bad());
        let addr = match f[1].strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => f[1].parse(),
        }
        .unwrap_or_else(|_| bad());
        let w = match f[2] {
            "R" | "READ" => false,
            "W" | "WRITE" => true,
            _ => bad(),
        };
        trace.push((t, addr, w));
    }
    let bytes = p.burst_bytes;
    let nch = p.channels as usize;
    let mut d = Dram::new(p);
    let mut fifo: VecDeque<u32> = VecDeque::new();
    let mut wake: Vec<Option<Time>> = vec![None; nch];
    let mut next = 0usize;
    let mut lat: Vec<Time> = Vec::new();
    let (mut reads, mut writes, mut last, mut last_write) = (0u64, 0u64, 0, 0);
    let first = trace.first().map_or(0, |r| r.0);
    loop {
        let tw = wake.iter().flatten().copied().min();
        let ta = trace.get(next).map(|r| r.0);
        let now = match (tw, ta) {
            (None, None) => break,
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) => x.min(y),
        };
        while next < trace.len() && trace[next].0 <= now {
            fifo.push_back(next as u32);
            next += 1;
        }
        // Admit in arrival order while the head fits; step every channel
        // due now or given a request; again while steps make room.
        let mut due = vec![false; nch];
        loop {
            due.iter_mut().for_each(|x| *x = false);
            while let Some(&i) = fifo.front() {
                let (t0, addr, w) = trace[i as usize];
                let ch = d.channel_of(addr);
                if !d.has_room(ch, w) {
                    break;
                }
                fifo.pop_front();
                d.enqueue(t0, i, addr, bytes, w);
                due[ch as usize] = true;
            }
            let mut stepped = false;
            for ch in 0..nch {
                if !(due[ch] || wake[ch] == Some(now)) {
                    continue;
                }
                stepped = true;
                let s = d.step(now, ch as u32);
                wake[ch] = s.next;
                if let Some(i) = s.issued {
                    let (t0, _, w) = trace[i.id as usize];
                    if w {
                        writes += 1;
                        last_write = last_write.max(i.done);
                    } else {
                        reads += 1;
                        last = last.max(i.done);
                        lat.push(i.done - t0);
                    }
                }
            }
            if !stepped {
                break;
            }
        }
        if fifo.front().is_some() && wake.iter().all(|w| w.is_none()) {
            // Full queues with nothing to issue cannot happen; guard against a stall.
            panic!("stalled at {now} ps with {} requests waiting", fifo.len());
        }
    }
    let n = lat.len().max(1) as f64;
    let mean = lat.iter().sum::<Time>() as f64 / n / 1e3;
    lat.sort_unstable();
    let median = lat.get(lat.len() / 2).copied().unwrap_or(0) as f64 / 1e3;
    // To the last read's data (as DRAMsim3's writes complete on acceptance).
    let last = if reads > 0 { last } else { last_write };
    let span = (last - first).max(1) as f64;
    let gbps = (reads + writes) as f64 * bytes as f64 / span * 1e3;
    let s = d.stats;
    println!(
        "{{\"reads\": {reads}, \"writes\": {writes}, \"mean_read_ns\": {mean:.3}, \"median_read_ns\": {median:.3}, \
         \"gbps\": {gbps:.4}, \"row_hits\": {}, \"row_empty\": {}, \"row_conflicts\": {}, \"refreshes\": {}}}",
        s.row_hits, s.row_empty, s.row_conflicts, s.refreshes
    );
}
