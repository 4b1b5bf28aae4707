//! `report.html`: `report.md` as one self-contained page, its figures inline.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};

use super::figures::FigureFile;
use super::headline::MARKS;

/// A wide table scrolls inside its own box rather than widening the page, and no cell breaks a
/// number across lines; a verdict mark colours its cell.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;\
padding:0 1em;color:#222;line-height:1.45}table{border-collapse:collapse;margin:1em 0;\
font-size:.9em;display:block;max-width:100%;overflow-x:auto}th,td{border:1px solid #ccc;\
padding:.25em .6em;white-space:nowrap}th{background:#f3f3f3}td{text-align:right}\
td:first-child{text-align:left}figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}\
code{background:#f3f3f3;padding:0 .2em}.v{font-weight:bold}.better{color:#1a7f37}\
td:has(>.better){background:#e6f4ea}.worse{color:#b42318}td:has(>.worse){background:#fdecea}\
.equivalent{color:#1f5fa8}td:has(>.equivalent){background:#e8f0fb}.inconclusive{color:#777}";

/// The page: the Markdown rendered to HTML (tables included), every image that names one of
/// `figures` replaced by that figure's SVG.
pub fn render_html(title: &str, markdown: &str, figures: &[FigureFile]) -> String {
    let mut events = Vec::new();
    let mut skipping = false;
    let mut in_cell = false;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match &event {
            Event::Start(Tag::Image { dest_url, .. }) => {
                if let Some(f) = figures.iter().find(|f| f.file == dest_url.as_ref()) {
                    events.push(Event::Html(
                        format!("<figure>{}</figure>", inline(&f.svg)).into(),
                    ));
                    skipping = true;
                    continue;
                }
            }
            Event::End(TagEnd::Image) if skipping => {
                skipping = false;
                continue;
            }
            _ if skipping => continue,
            Event::Start(Tag::TableCell) => in_cell = true,
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Text(text) if in_cell => {
                if let Some((before, span)) = marked(text) {
                    events.push(Event::Text(before.to_string().into()));
                    events.push(Event::Html(span.into()));
                    continue;
                }
            }
            _ => {}
        }
        events.push(event);
    }
    let mut body = String::new();
    html::push_html(&mut body, events.into_iter());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// A table cell's text that ends in a verdict mark, or is a verdict: the text before it, and the
/// mark or word as a span whose class names the verdict.
fn marked(text: &str) -> Option<(&str, String)> {
    if let Some((v, _)) = MARKS.iter().find(|(v, _)| v.as_str() == text) {
        return Some(("", format!("<span class=\"{}\">{text}</span>", v.as_str())));
    }
    let last = text.chars().last()?;
    let (verdict, _) = MARKS.iter().find(|(_, m)| *m == last)?;
    let before = &text[..text.len() - last.len_utf8()];
    let class = verdict.as_str();
    Some((
        before,
        format!("<span class=\"v {class}\" title=\"{class}\">{last}</span>"),
    ))
}

/// An SVG document as an element of the page (without its XML declaration, if any).
fn inline(svg: &str) -> &str {
    match svg.trim_start().strip_prefix("<?xml") {
        Some(rest) => rest
            .split_once("?>")
            .map_or(svg, |(_, body)| body.trim_start()),
        None => svg,
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
