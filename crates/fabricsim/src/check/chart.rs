//! A counterexample drawn as a message sequence chart (SVG): one lifeline
//! per agent, one row per step, arrows for delivered messages.
//!
//! Labels are laid out from their widths (monospace, so a label's width is
//! its length): lanes are spaced by their longest name, a message label that
//! is wider than its arrow starts at the arrow's left end instead of being
//! centred on it, long labels wrap onto more lines (the row grows), and the
//! picture is as wide as its widest text, so no label is clipped or drawn
//! over another.

use super::explorer::Report;

/// Width of one character at the chart's 11 px monospace font (0.6 em),
/// rounded up so that estimates err on the wide side.
const CHAR_W: f64 = 6.7;
/// Width of one character of the 13 px bold title.
const TITLE_CHAR_W: f64 = 8.0;
const LINE_H: usize = 13;
const ROW_H: usize = 34;
/// Labels longer than this wrap.
const WRAP: usize = 80;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn width_of(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// `s` in lines of at most `max` characters, broken after a space or a
/// comma where there is one.
fn wrap(s: &str, max: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest: Vec<char> = s.chars().collect();
    while rest.len() > max {
        let cut = rest[..max].iter().rposition(|c| *c == ' ' || *c == ',').map(|i| i + 1).filter(|&i| i > max / 2);
        let cut = cut.unwrap_or(max);
        lines.push(rest[..cut].iter().collect::<String>().trim_end().to_string());
        rest.drain(..cut);
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    lines.push(rest.into_iter().collect());
    lines
}

/// A text element and its horizontal extent.
struct Label {
    x: f64,
    y: usize,
    middle: bool,
    text: String,
    style: &'static str,
}

impl Label {
    fn right(&self) -> f64 {
        if self.middle {
            self.x + width_of(&self.text) / 2.0
        } else {
            self.x + width_of(&self.text)
        }
    }

    fn svg(&self) -> String {
        let anchor = if self.middle { " text-anchor='middle'" } else { "" };
        format!("<text x='{:.1}' y='{}'{anchor}{}>{}</text>\n", self.x, self.y, self.style, esc(&self.text))
    }
}

pub fn sequence_svg(report: &Report) -> Option<String> {
    let v = report.violation.as_ref()?;
    let mut lanes: Vec<String> = Vec::new();
    for s in &v.steps {
        for name in s.from.iter().chain(std::iter::once(&s.agent)) {
            if !lanes.contains(name) {
                lanes.push(name.clone());
            }
        }
    }
    lanes.sort();
    let longest_lane = lanes.iter().map(|l| width_of(l)).fold(0.0, f64::max);
    let spacing = (longest_lane + 24.0).max(170.0);
    let last_step = v.steps.iter().map(|s| s.step).max().unwrap_or(0);
    // the step numbers' column, then half a lane name
    let left = (8.0 + width_of(&last_step.to_string()) + 12.0 + longest_lane / 2.0).max(90.0);
    let lane_x = |name: &str| left + spacing * lanes.iter().position(|l| l == name).unwrap_or(0) as f64;
    let mut labels: Vec<Label> = Vec::new();
    let mut marks = String::new();
    let mut y = 80;
    for s in &v.steps {
        let lines = wrap(&s.event, WRAP);
        let to = lane_x(&s.agent);
        match &s.from {
            Some(f) if f != &s.agent => {
                let from = lane_x(f);
                // the labels sit above the arrow
                let arrow_y = y + LINE_H * (lines.len() - 1);
                let (lo, hi) = (from.min(to), from.max(to));
                let widest = lines.iter().map(|l| width_of(l)).fold(0.0, f64::max);
                let middle = widest <= hi - lo - 8.0;
                for (k, line) in lines.iter().enumerate() {
                    let x = if middle { (lo + hi) / 2.0 } else { lo + 4.0 };
                    labels.push(Label { x, y: y - 4 + LINE_H * k, middle, text: line.clone(), style: "" });
                }
                marks += &format!(
                    "<line x1='{from:.1}' y1='{arrow_y}' x2='{to:.1}' y2='{arrow_y}' stroke='black' marker-end='url(#a)'/>\n"
                );
                labels.push(Label {
                    x: 8.0,
                    y: arrow_y + 4,
                    middle: false,
                    text: s.step.to_string(),
                    style: " fill='#666'",
                });
            }
            _ => {
                marks += &format!("<circle cx='{to:.1}' cy='{y}' r='4' fill='#36c'/>\n");
                for (k, line) in lines.iter().enumerate() {
                    labels.push(Label {
                        x: to + 8.0,
                        y: y + 4 + LINE_H * k,
                        middle: false,
                        text: line.clone(),
                        style: "",
                    });
                }
                labels.push(Label { x: 8.0, y: y + 4, middle: false, text: s.step.to_string(), style: " fill='#666'" });
            }
        }
        y += ROW_H + LINE_H * (lines.len() - 1);
    }
    let lanes_right = lane_x(lanes.last().map(String::as_str).unwrap_or("")) + spacing / 2.0;
    let title = format!("{}: {}", report.protocol, v.kind);
    let mut width = labels.iter().map(Label::right).fold(lanes_right, f64::max);
    width = width.max(10.0 + title.chars().count() as f64 * TITLE_CHAR_W);
    // the violation's detail wraps to the picture (at least 100 characters a line)
    let per_line = ((width - 20.0) / CHAR_W).max(100.0) as usize;
    let detail = wrap(&v.detail, per_line);
    let detail_top = y + 10;
    for (k, line) in detail.iter().enumerate() {
        labels.push(Label {
            x: 10.0,
            y: detail_top + LINE_H * k,
            middle: false,
            text: line.clone(),
            style: " fill='#b00'",
        });
    }
    width = labels.iter().map(Label::right).fold(width, f64::max) + 10.0;
    let height = detail_top + LINE_H * detail.len() + 20;
    let mut svg = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{height}' font-family='monospace' font-size='11'>\n\
         <defs><marker id='a' markerWidth='8' markerHeight='8' refX='7' refY='4' orient='auto'><path d='M0,0 L8,4 L0,8 z'/></marker></defs>\n\
         <text x='10' y='20' font-size='13' font-weight='bold'>{}</text>\n",
        width.ceil() as u64,
        esc(&title)
    );
    for l in &lanes {
        let x = lane_x(l);
        svg += &format!(
            "<text x='{x:.1}' y='50' text-anchor='middle' font-weight='bold'>{}</text>\
             <line x1='{x:.1}' y1='58' x2='{x:.1}' y2='{}' stroke='#999' stroke-dasharray='4,3'/>\n",
            esc(l),
            y
        );
    }
    svg += &marks;
    for l in &labels {
        svg += &l.svg();
    }
    svg += "</svg>\n";
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::explorer::{Counterexample, TraceStep};

    fn report(steps: Vec<TraceStep>, detail: &str) -> Report {
        Report {
            protocol: "dcoh".into(),
            states: 0,
            transitions: 0,
            depth: 0,
            seconds: 0.0,
            peak_rss_kb: 0,
            complete: false,
            violation: Some(Counterexample { kind: "data-value invariant".into(), detail: detail.into(), steps }),
            final_states: 0,
            interrupted: false,
            symmetry: false,
            threads: 1,
            resumed_from: None,
            checkpoint: None,
            disk_error: None,
            out_of_memory: None,
        }
    }

    fn step(step: usize, from: Option<&str>, agent: &str, event: &str) -> TraceStep {
        TraceStep {
            step,
            what: if from.is_some() { "deliver" } else { "action" },
            from: from.map(str::to_string),
            agent: agent.into(),
            event: event.into(),
            before: String::new(),
            after: String::new(),
        }
    }

    /// Every `<text>` element: (left, right, baseline y, text), from its
    /// x, anchor and length at the chart's character width.
    fn texts(svg: &str) -> Vec<(f64, f64, f64, String)> {
        let mut out = Vec::new();
        for part in svg.split("<text ").skip(1) {
            let (attrs, rest) = part.split_once('>').unwrap();
            let text =
                rest.split_once("</text>").unwrap().0.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
            let attr = |name: &str| -> f64 {
                let a = attrs.split(&format!("{name}='")).nth(1).unwrap();
                a.split('\'').next().unwrap().parse().unwrap()
            };
            let (x, y) = (attr("x"), attr("y"));
            let cw = if attrs.contains("font-size='13'") { TITLE_CHAR_W } else { CHAR_W };
            let w = text.chars().count() as f64 * cw;
            let left = if attrs.contains("middle") { x - w / 2.0 } else { x };
            out.push((left, left + w, y, text));
        }
        out
    }

    #[test]
    fn long_labels_stay_inside_the_picture_and_never_overlap() {
        let long =
            "BIRsp { line: 1, dirty: true, data: Some(0), block: [0, 1], tag: 3, source: req0, granted: Shared }";
        let steps = vec![
            step(1, None, "requester_with_a_long_name0", "MemWr line 1 (write back, keeps the copy in the buffer)"),
            step(2, Some("requester_with_a_long_name0"), "dev0", long),
            step(3, Some("dev0"), "requester_with_a_long_name1", "BISnp { block: [0, 1], kind: Inv }"),
            step(4, Some("requester_with_a_long_name1"), "dev0", "BIRsp {"),
            step(10, Some("dev0"), "requester_with_a_long_name0", &"X".repeat(300)),
        ];
        let svg = sequence_svg(&report(steps, &"memory ends with 0 but the last write wrote 1; ".repeat(8))).unwrap();
        let width: f64 = svg.split("width='").nth(1).unwrap().split('\'').next().unwrap().parse().unwrap();
        let t = texts(&svg);
        assert!(t.iter().any(|x| x.3 == "BIRsp {"), "the short label is drawn whole");
        for (l, r, _, s) in &t {
            assert!(*l >= 0.0 && *r <= width, "{s:?} spans {l:.0}..{r:.0}, outside 0..{width}");
        }
        for (i, a) in t.iter().enumerate() {
            for b in &t[i + 1..] {
                let same_line = (a.2 - b.2).abs() < 11.0;
                let apart = a.1 <= b.0 || b.1 <= a.0;
                assert!(!same_line || apart, "{:?} and {:?} overlap", a.3, b.3);
            }
        }
    }

    #[test]
    fn wrap_breaks_after_spaces_and_keeps_every_character() {
        let s = "a, b, c, d, e, f, g";
        let lines = wrap(s, 8);
        assert!(lines.iter().all(|l| l.chars().count() <= 8), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), s.replace(' ', ""));
        assert_eq!(wrap("short", 80), vec!["short".to_string()]);
    }
}
