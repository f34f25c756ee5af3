//! The browser build's side of the page: the run the page's address names
//! (`?scenario=…&seed=…&set=…`, see `view::link`), downloads instead of the files the desktop
//! writes, the page's own address for "copy link", a place for exported metrics, and lines in
//! the console.

use wasm_bindgen::JsCast;

use crate::sim::config::SimConfig;
use crate::view::link::{Link, parse_query, resolve};

/// The run the page's address names (`?scenario=…&seed=…&set=…`); a bad address is shown on
/// the page and logged, and the default scenario runs.
pub fn link_from_page() -> (SimConfig, Link) {
    let query = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let found = parse_query(&query).and_then(|l| Ok((resolve(&l)?, l)));
    found.unwrap_or_else(|e| {
        show_problem(&format!(
            "link not understood: {e}; running the default scenario"
        ));
        let link = parse_query("").expect("empty query");
        (resolve(&link).expect("the default scenario loads"), link)
    })
}

/// Puts `text` (metrics CSV) into the page's `<pre id="metrics">` and says so in the title
/// (what the browser test reads).
pub fn put_metrics(text: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let pre = document.get_element_by_id("metrics").or_else(|| {
        let pre = document.create_element("pre").ok()?;
        pre.set_id("metrics");
        document.body()?.append_child(&pre).ok()?;
        Some(pre)
    });
    if let Some(pre) = pre {
        pre.set_text_content(Some(text));
        document.set_title("pandemic-boids: exported");
    }
}

/// Writes `message` to the browser's console. (The page cannot time itself: a test browser
/// under a virtual time budget stops every clock a page can read while the page computes.
/// `web/bench.sh` times a run by the wall-clock stamps the browser puts on these lines.)
pub fn log(message: &str) {
    web_sys::console::log_1(&message.into());
}

/// Writes `message` into the page's `#problem` element (if any) and the console.
fn show_problem(message: &str) {
    web_sys::console::error_1(&message.into());
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("problem"))
    {
        el.set_text_content(Some(message));
    }
}

/// The page's address without its query: origin and path.
pub fn page_address() -> String {
    web_sys::window()
        .map(|w| {
            let l = w.location();
            format!(
                "{}{}",
                l.origin().unwrap_or_default(),
                l.pathname().unwrap_or_default()
            )
        })
        .unwrap_or_default()
}

/// Offers `text` as a download named `name`.
pub fn download(name: &str, text: &str) -> Result<(), String> {
    offer(name, &js_sys::Array::of1(&text.into()), "text/plain")
}

/// Offers `bytes` (a checkpoint) as a download named `name`.
pub fn download_bytes(name: &str, bytes: &[u8]) -> Result<(), String> {
    let array = js_sys::Uint8Array::from(bytes);
    offer(
        name,
        &js_sys::Array::of1(&array),
        "application/octet-stream",
    )
}

/// Offers the blob of `parts` as a download named `name`.
fn offer(name: &str, parts: &js_sys::Array, mime: &str) -> Result<(), String> {
    let fail = |e: wasm_bindgen::JsValue| format!("download failed: {e:?}");
    let window = web_sys::window().ok_or("no window")?;
    let document = window.document().ok_or("no document")?;
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(parts, &options).map_err(fail)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(fail)?;
    let a: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(fail)?
        .dyn_into()
        .map_err(|_| "not an anchor".to_string())?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url).map_err(fail)
}
