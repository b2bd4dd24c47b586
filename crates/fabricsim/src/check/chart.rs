//! A counterexample drawn as a message sequence chart (SVG): one lifeline
//! per agent, one row per step, arrows for delivered messages.

use super::explorer::Report;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
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
    let lane_x = |name: &str| 90 + 170 * lanes.iter().position(|l| l == name).unwrap_or(0);
    let row_h = 34;
    let width = 90 + 170 * lanes.len().max(1) + 60;
    let height = 90 + row_h * (v.steps.len() + 1) + 40;
    let mut svg = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-family='monospace' font-size='11'>\n\
         <defs><marker id='a' markerWidth='8' markerHeight='8' refX='7' refY='4' orient='auto'><path d='M0,0 L8,4 L0,8 z'/></marker></defs>\n\
         <text x='10' y='20' font-size='13' font-weight='bold'>{}: {}</text>\n",
        esc(&report.protocol),
        esc(&v.kind)
    );
    for l in &lanes {
        let x = lane_x(l);
        svg += &format!(
            "<text x='{x}' y='50' text-anchor='middle' font-weight='bold'>{}</text>\
             <line x1='{x}' y1='58' x2='{x}' y2='{}' stroke='#999' stroke-dasharray='4,3'/>\n",
            esc(l),
            height - 30
        );
    }
    for (i, s) in v.steps.iter().enumerate() {
        let y = 80 + row_h * i;
        let to = lane_x(&s.agent);
        svg += &format!("<text x='8' y='{}' fill='#666'>{}</text>", y + 4, s.step);
        match &s.from {
            Some(f) if f != &s.agent => {
                let from = lane_x(f);
                svg += &format!(
                    "<line x1='{from}' y1='{y}' x2='{to}' y2='{y}' stroke='black' marker-end='url(#a)'/>\
                     <text x='{}' y='{}' text-anchor='middle'>{}</text>\n",
                    (from + to) / 2,
                    y - 4,
                    esc(&s.event)
                );
            }
            _ => {
                svg += &format!(
                    "<circle cx='{to}' cy='{y}' r='4' fill='#36c'/><text x='{}' y='{}'>{}</text>\n",
                    to + 8,
                    y + 4,
                    esc(&s.event)
                );
            }
        }
    }
    let y = 80 + row_h * v.steps.len();
    svg += &format!("<text x='10' y='{}' fill='#b00'>{}</text>\n</svg>\n", y + 10, esc(&v.detail));
    Some(svg)
}
