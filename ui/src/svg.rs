//! Buffer → SVG: a picture of a rendered frame's cell grid with its colours, for the
//! README screenshots.
//!
//! Owns the conversion only (our own small writer: one rect per background run, one text
//! element per run of same-styled glyphs). Must not write files; the screenshots test does.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

const CELL_W: f32 = 8.4;
const CELL_H: f32 = 17.0;
const FONT: f32 = 14.0;
const DEFAULT_FG: (u8, u8, u8) = (0xc8, 0xcc, 0xd4);
const DEFAULT_BG: (u8, u8, u8) = (0x1a, 0x1d, 0x23);

fn rgb(c: Color, default: (u8, u8, u8)) -> (u8, u8, u8) {
    match c {
        Color::Reset => default,
        Color::Black => (0, 0, 0),
        Color::Red => (0xcd, 0x31, 0x31),
        Color::Green => (0x0d, 0xbc, 0x79),
        Color::Yellow => (0xe5, 0xe5, 0x10),
        Color::Blue => (0x24, 0x72, 0xc8),
        Color::Magenta => (0xbc, 0x3f, 0xbc),
        Color::Cyan => (0x11, 0xa8, 0xcd),
        Color::Gray => (0xcc, 0xcc, 0xcc),
        Color::DarkGray => (0x66, 0x66, 0x66),
        Color::LightRed => (0xf1, 0x4c, 0x4c),
        Color::LightGreen => (0x23, 0xd1, 0x8b),
        Color::LightYellow => (0xf5, 0xf5, 0x43),
        Color::LightBlue => (0x3b, 0x8e, 0xea),
        Color::LightMagenta => (0xd6, 0x70, 0xd6),
        Color::LightCyan => (0x29, 0xb8, 0xdb),
        Color::White => (0xff, 0xff, 0xff),
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) => (i, i, i),
    }
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Foreground, background and modifiers of one cell, reverse video applied.
type CellLook = ((u8, u8, u8), (u8, u8, u8), Modifier);

/// The SVG text of `buf`.
pub fn buffer_to_svg(buf: &Buffer) -> String {
    let area = buf.area;
    let (w, h) = (area.width as f32 * CELL_W, area.height as f32 * CELL_H);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"{}\"/>\n\
         <g font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"{FONT}\" xml:space=\"preserve\">\n",
        hex(DEFAULT_BG)
    );
    for y in 0..area.height {
        let cells: Vec<_> = (0..area.width)
            .map(|x| &buf[(area.x + x, area.y + y)])
            .collect();
        let colours: Vec<CellLook> = cells
            .iter()
            .map(|c| {
                let (mut fg, mut bg) = (rgb(c.fg, DEFAULT_FG), rgb(c.bg, DEFAULT_BG));
                if c.modifier.contains(Modifier::REVERSED) {
                    std::mem::swap(&mut fg, &mut bg);
                }
                (fg, bg, c.modifier)
            })
            .collect();
        let mut x = 0usize;
        while x < cells.len() {
            let bg = colours[x].1;
            let start = x;
            while x < cells.len() && colours[x].1 == bg {
                x += 1;
            }
            if bg != DEFAULT_BG {
                out.push_str(&format!(
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{}\"/>\n",
                    start as f32 * CELL_W,
                    y as f32 * CELL_H,
                    (x - start) as f32 * CELL_W,
                    hex(bg)
                ));
            }
        }
        let mut x = 0usize;
        while x < cells.len() {
            let (fg, _, m) = colours[x];
            let start = x;
            let mut text = String::new();
            while x < cells.len() && colours[x].0 == fg && colours[x].2 == m {
                text.push_str(cells[x].symbol());
                x += 1;
            }
            if text.trim().is_empty() {
                continue;
            }
            let attr =
                |flag: Modifier, attr: &'static str| if m.contains(flag) { attr } else { "" };
            let weight = attr(Modifier::BOLD, " font-weight=\"bold\"");
            let italic = attr(Modifier::ITALIC, " font-style=\"italic\"");
            let opacity = attr(Modifier::DIM, " opacity=\"0.6\"");
            let underline = attr(Modifier::UNDERLINED, " text-decoration=\"underline\"");
            out.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\" textLength=\"{:.1}\" lengthAdjust=\"spacingAndGlyphs\"{weight}{italic}{opacity}{underline}>{}</text>\n",
                start as f32 * CELL_W,
                y as f32 * CELL_H + CELL_H * 0.78,
                hex(fg),
                (x - start) as f32 * CELL_W,
                escape(&text)
            ));
        }
    }
    out.push_str("</g>\n</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn svg_has_cells_colours_and_escapes() {
        let mut b = Buffer::empty(Rect::new(0, 0, 6, 1));
        b.set_string(
            0,
            0,
            "<a&b>",
            Style::default()
                .fg(Color::Rgb(255, 0, 0))
                .bg(Color::Rgb(0, 0, 255)),
        );
        let svg = buffer_to_svg(&b);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("fill=\"#ff0000\""));
        assert!(svg.contains("fill=\"#0000ff\""));
        assert!(svg.contains("&lt;a&amp;b&gt;"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
