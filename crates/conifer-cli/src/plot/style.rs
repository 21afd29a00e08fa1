//! The pictures' shared look: the bundled font, the colour scales and the time unit of an
//! axis.

use plotters::prelude::*;
use std::sync::Once;

/// The font family every picture uses (the bundled DejaVu Sans).
pub(super) const FONT: &str = "sans-serif";

/// Registers the bundled font (DejaVu Sans) with plotters' pure-Rust text renderer, once.
pub(super) fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../assets/DejaVuSans.ttf");
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, bytes);
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, bytes);
    });
}

/// Viridis, by linear interpolation between 9 of its colours; `t` in [0, 1].
pub(super) fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A distinct colour per series index.
pub(super) fn palette(i: usize) -> RGBColor {
    const P: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let c = P[i % P.len()];
    RGBColor(c.0, c.1, c.2)
}

/// Colours for up to [`NAMED_COLOURS`] named series that are all different from each other
/// and from [`OTHER`] (the palette without its grey).
pub(super) fn named(i: usize) -> RGBColor {
    const ORDER: [usize; NAMED_COLOURS] = [0, 1, 2, 3, 4, 5, 6, 8, 9];
    palette(ORDER[i % NAMED_COLOURS])
}

/// How many series [`named`] tells apart.
pub(super) const NAMED_COLOURS: usize = 9;

/// The colour of the series grouping everything not named.
pub(super) const OTHER: RGBColor = RGBColor(127, 127, 127);

/// Time in the unit of the largest value: (divisor, unit name).
pub(super) fn time_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 1e9 {
        (1e9, "s")
    } else if max_ns >= 1e6 {
        (1e6, "ms")
    } else if max_ns >= 1e3 {
        (1e3, "us")
    } else {
        (1.0, "ns")
    }
}
