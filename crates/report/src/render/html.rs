//! `report.html`: `report.md` as one self-contained page, its figures inline.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};

use super::figures::FigureFile;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;\
padding:0 1em;color:#222;line-height:1.45}table{border-collapse:collapse;margin:1em 0;\
font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f3f3f3}\
td{text-align:right}td:first-child{text-align:left}figure{margin:1.5em 0}\
figure svg{max-width:100%;height:auto}code{background:#f3f3f3;padding:0 .2em}";

/// The page: the Markdown rendered to HTML (tables included), every image that names one of
/// `figures` replaced by that figure's SVG.
pub fn render_html(title: &str, markdown: &str, figures: &[FigureFile]) -> String {
    let mut events = Vec::new();
    let mut skipping = false;
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
