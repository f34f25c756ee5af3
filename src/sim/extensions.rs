//! Extensions from a user's own binary (`cli::main_with`): plugins added to every simulation and
//! to the app this process builds, and the `[extensions.<name>]` config sections they own, each
//! with a check that validation runs like every key's. A process registers them once, before
//! it builds anything. No systems live here.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;

/// A plugin function of an extension.
type Extend = Arc<dyn Fn(&mut App) + Send + Sync>;

/// The check of an extension's config section: `Err` says what is wrong and what is allowed.
pub type Check = fn(&toml::Value) -> Result<(), String>;

static PLUGINS: Mutex<Vec<Extend>> = Mutex::new(Vec::new());
static SECTIONS: Mutex<Vec<(String, Check)>> = Mutex::new(Vec::new());

/// Adds `extend` to every simulation and app built from now on in this process.
pub fn add_plugin(extend: impl Fn(&mut App) + Send + Sync + 'static) {
    PLUGINS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::new(extend));
}

/// Declares the config section `[extensions.<name>]` with its check (read it with
/// `SimConfig::extension`).
pub fn add_section(name: &str, check: Check) {
    SECTIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((name.to_string(), check));
}

/// Applies every registered plugin to `app` (called by `SimPlugin`).
pub fn apply(app: &mut App) {
    let plugins: Vec<Extend> = PLUGINS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for extend in plugins {
        extend(app);
    }
}

/// The check of section `name`, if one is declared.
pub fn check_of(name: &str) -> Option<Check> {
    SECTIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, c)| *c)
}

/// The declared sections' names.
pub fn section_names() -> Vec<String> {
    SECTIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(n, _)| n.clone())
        .collect()
}
