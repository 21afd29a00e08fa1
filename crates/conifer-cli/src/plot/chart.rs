//! Chart pieces several pictures share: the titled chart frame, the axes' fonts, labelled
//! series of boxes, the legend, and what drawing returns.

use super::style::FONT;
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;

/// A chart on `area` titled `title` in `font` points, with the x and y label areas
/// `labels` pixels wide.
pub(super) fn titled<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: String,
    font: u32,
    labels: (u32, u32),
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, (FONT, font))
        .margin(10)
        .x_label_area_size(labels.0)
        .y_label_area_size(labels.1);
    b
}

/// Draws the axes `mesh` configures, labels in 12 points and axis descriptions in 15.
pub(super) fn axes<X, Y, DB>(mesh: &mut MeshStyle<'_, '_, X, Y, DB>) -> Res
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, 12))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(err)
}

/// Draws boxes with the given corners in `style` as one series, named `label` in the
/// legend.
pub(super) fn labelled<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    boxes: impl IntoIterator<Item = [CT::From; 2]>,
    style: ShapeStyle,
    label: &str,
) -> Res
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .draw_series(boxes.into_iter().map(|c| Rectangle::new(c, style)))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], style));
    Ok(())
}

/// A legend of `entries` (name, colour) drawn on its own `area` (beside a chart, so it never
/// covers the data), top-aligned with the chart's plotting area.
pub(super) fn side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor)],
    font: u32,
) -> Res {
    let step = font as i32 + 8;
    for (i, (name, colour)) in entries.iter().enumerate() {
        let y = 50 + i as i32 * step;
        area.draw(&Rectangle::new(
            [(4, y), (4 + font as i32, y + font as i32)],
            colour.filled(),
        ))
        .map_err(err)?;
        area.draw(&Text::new(
            name.clone(),
            (10 + font as i32, y),
            (FONT, font).into_font(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// What drawing a picture returns.
pub type Res = Result<(), String>;

/// A plotters error as a message.
pub fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing failed: {e:?}")
}

/// `rgb` (row-major, 3 bytes a pixel) as a `w` × `h` image.
pub fn image_rgb(w: u32, h: u32, rgb: Vec<u8>) -> Result<image::RgbImage, String> {
    image::RgbImage::from_raw(w, h, rgb).ok_or_else(|| "bad image buffer".to_string())
}
