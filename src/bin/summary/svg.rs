//! `--summary --svg`: the trace as a picture that any browser shows: per
//! ring, a requests-in-flight curve, the program's long library calls (JSON
//! traces) and the requests as bars (one lane per request in flight at
//! once, coloured by opcode, errors outlined in red), then the summary
//! table.

use core::fmt::{self, Write};

use super::{op_name, Dur, Trace};
use crate::Out;

const W: u64 = 1400;
const LEFT: u64 = 130;
const RIGHT: u64 = 20;
const PLOT: u64 = W - LEFT - RIGHT;
const LANE_H: u64 = 9;
const LANES: usize = 40;
const CURVE_H: u64 = 36;
/// Bars drawn at most; the rest are counted in the picture's title.
const MAX_BARS: usize = 20_000;

const COLOURS: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#e15759"];

/// Colours go to the opcodes present in order, so that two never share
/// one unless more than ten appear.
fn colour(seen: &[bool; 256], op: u8) -> &'static str {
    let rank = seen.iter().take(op as usize).filter(|&&s| s).count();
    COLOURS[rank % COLOURS.len()]
}

/// The summary table, kept in memory to be drawn as text.
struct Buf {
    b: [u8; 16384],
    len: usize,
}

impl Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(self.b.len() - self.len);
        self.b[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Text for SVG: the XML specials escaped.
struct X<'a>(&'a [u8]);

impl fmt::Display for X<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &c in self.0 {
            match c {
                b'<' => f.write_str("&lt;")?,
                b'>' => f.write_str("&gt;")?,
                b'&' => f.write_str("&amp;")?,
                0x20..=0x7e => f.write_char(c as char)?,
                _ => f.write_char('?')?,
            }
        }
        Ok(())
    }
}

pub fn draw(t: &mut Trace, o: &mut Out) -> fmt::Result {
    let mut table = Buf { b: [0; 16384], len: 0 };
    t.text(&mut table)?;
    let n = t.n;
    let reqs = &mut t.reqs[..n];
    reqs.sort_unstable_by_key(|r| (r.ring, r.call, r.start));
    let requests = reqs.iter().filter(|r| !r.call).count();
    let t0 = reqs.iter().map(|r| r.start).min().unwrap_or(0);
    let t1 = reqs.iter().map(|r| r.start + r.dur).max().unwrap_or(t0).max(t0 + 1);
    let span = t1 - t0;
    let x = |ns: u64| LEFT as f64 + (ns.saturating_sub(t0)) as f64 * PLOT as f64 / span as f64;

    // Lanes per ring, first fit; a ring's height is the lanes it used.
    let mut heights = [0u64; super::MAX_RINGS];
    let mut calls = [false; super::MAX_RINGS];
    let mut ends = [0u64; LANES];
    let mut ring = u16::MAX;
    for r in reqs.iter_mut() {
        if r.call {
            calls[r.ring as usize % super::MAX_RINGS] = true;
            continue;
        }
        if r.ring != ring {
            ring = r.ring;
            ends = [0; LANES];
        }
        let k = (0..LANES).find(|&k| ends[k] <= r.start).unwrap_or(LANES - 1);
        ends[k] = ends[k].max(r.start + r.dur);
        r.lane = k as u32;
        let hk = &mut heights[r.ring as usize % super::MAX_RINGS];
        *hk = (*hk).max(k as u64 + 1);
    }

    let mut seen = [false; 256];
    for r in reqs.iter().filter(|r| !r.call) {
        seen[r.op as usize] = true;
    }
    let table_lines = table.b[..table.len].split(|&c| c == b'\n').count() as u64;
    let mut h = 60;
    for (k, _) in t.rings[..t.nrings].iter().enumerate() {
        h += 24 + CURVE_H + 6 + heights[k] * LANE_H + 10 + if calls[k] { LANE_H + 6 } else { 0 };
    }
    let legend_y = h + 10;
    h = legend_y + 30 + table_lines * 15 + 10;

    writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" \
        font-family=\"DejaVu Sans Mono, monospace\" font-size=\"12\">"
    )?;
    writeln!(o, "<rect width=\"{W}\" height=\"{h}\" fill=\"white\"/>")?;
    writeln!(o, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">io_uring requests over {} ({} requests{})</text>",
        Dur(span), requests, if n > MAX_BARS { ", the first 20000 bars drawn" } else { "" })?;
    // Time axis ticks: ten steps.
    for k in 0..=10u64 {
        let xx = LEFT + PLOT * k / 10;
        writeln!(
            o,
            "<line x1=\"{xx}\" y1=\"34\" x2=\"{xx}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{xx}\" y=\"46\" \
            text-anchor=\"middle\" fill=\"#555\" font-size=\"10\">{}</text>",
            legend_y - 10,
            Dur(span * k / 10)
        )?;
    }
    let mut y = 60;
    let mut at = 0;
    for (k, ring) in t.rings[..t.nrings].iter().enumerate() {
        writeln!(
            o,
            "<text x=\"10\" y=\"{}\" font-weight=\"bold\">ring {} (pid {})</text>",
            y + 14,
            X(ring.name()),
            ring.pid
        )?;
        y += 24;
        // In flight per pixel column: +1 where a request starts, -1 after it ends.
        let mut diff = [0i32; PLOT as usize + 2];
        let first = at;
        while at < n && reqs[at].ring as usize == k && !reqs[at].call {
            let r = reqs[at];
            let a = (x(r.start) as u64 - LEFT).min(PLOT) as usize;
            let b = (x(r.start + r.dur) as u64 - LEFT).min(PLOT) as usize;
            diff[a] += 1;
            diff[b + 1] -= 1;
            at += 1;
        }
        let mut level = [0i32; PLOT as usize + 1];
        let mut cur = 0;
        for (c, d) in diff.iter().take(PLOT as usize + 1).enumerate() {
            cur += d;
            level[c] = cur;
        }
        let peak = level.iter().copied().max().unwrap_or(0).max(1);
        write!(o, "<text x=\"10\" y=\"{}\" fill=\"#555\" font-size=\"10\">in flight (max {peak})</text><polyline fill=\"#cfe0f3\" \
            stroke=\"#4e79a7\" points=\"{LEFT},{}", y + CURVE_H / 2, y + CURVE_H)?;
        for (c, &l) in level.iter().enumerate() {
            let yy = y + CURVE_H - (l.max(0) as u64 * CURVE_H / peak as u64);
            write!(o, " {},{yy}", LEFT + c as u64)?;
        }
        writeln!(o, " {},{}\"/>", LEFT + PLOT, y + CURVE_H)?;
        y += CURVE_H + 6;
        let bars = first..at;
        if calls[k] {
            writeln!(o, "<text x=\"10\" y=\"{}\" fill=\"#555\" font-size=\"10\">submit/wait calls</text>", y + 8)?;
        }
        while at < n && reqs[at].ring as usize == k {
            let r = reqs[at];
            let x0 = x(r.start);
            let wd = (x(r.start + r.dur) - x0).max(1.0);
            if at < MAX_BARS {
                writeln!(o, "<rect x=\"{x0:.1}\" y=\"{y}\" width=\"{wd:.1}\" height=\"{}\" fill=\"#aaa\"><title>call {}</title></rect>",
                    LANE_H - 2, Dur(r.dur))?;
            }
            at += 1;
        }
        if calls[k] {
            y += LANE_H + 6;
        }
        writeln!(o, "<text x=\"10\" y=\"{}\" fill=\"#555\" font-size=\"10\">requests</text>", y + 10)?;
        for r in reqs[bars.clone()].iter().take(MAX_BARS.saturating_sub(bars.start)) {
            let x0 = x(r.start);
            let wd = (x(r.start + r.dur) - x0).max(1.0);
            let yy = y + r.lane as u64 * LANE_H;
            let stroke = if r.err { " stroke=\"#d00\" stroke-width=\"1.5\"" } else { "" };
            writeln!(o, "<rect x=\"{x0:.1}\" y=\"{yy}\" width=\"{wd:.1}\" height=\"{}\" fill=\"{}\"{stroke}><title>{} {}</title></rect>",
                LANE_H - 2, colour(&seen, r.op), op_name(r.op), Dur(r.dur))?;
        }
        y += heights[k] * LANE_H + 10;
    }
    // Legend: the opcodes present.
    let mut lx = 10;
    for op in (0..256).filter(|&op| seen[op]) {
        writeln!(
            o,
            "<rect x=\"{lx}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            legend_y,
            colour(&seen, op as u8),
            lx + 16,
            legend_y + 11,
            op_name(op as u8)
        )?;
        lx += 30 + 8 * op_name(op as u8).len() as u64;
    }
    writeln!(o, "<rect x=\"{lx}\" y=\"{legend_y}\" width=\"12\" height=\"12\" fill=\"white\" stroke=\"#d00\" stroke-width=\"1.5\"/>\
        <text x=\"{}\" y=\"{}\">error (res &lt; 0)</text>", lx + 16, legend_y + 11)?;
    let mut ty = legend_y + 40;
    for line in table.b[..table.len].split(|&c| c == b'\n') {
        writeln!(o, "<text x=\"10\" y=\"{ty}\" xml:space=\"preserve\">{}</text>", X(line))?;
        ty += 15;
    }
    writeln!(o, "</svg>")
}
