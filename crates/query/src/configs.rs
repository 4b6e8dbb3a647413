//! The settings `SHOW CONFIGS`, `GET CONFIGS` and `UPDATE CONFIGS` read and change while the server runs
//! (NebulaGraph's mutable gflags, kept by its meta service). Each is a cell the part that obeys it reads at use time,
//! so a change takes effect from the next request, connection or session check on; nothing is persisted, as
//! NebulaGraph's default `local_config=true` reads the flags from the command line again on a restart.
//!
//! The errors are NebulaGraph's: its meta service's `Conf not existed!` for an unknown name (under `GET`/`UPDATE
//! CONFIGS name` without a module, in the graph and the storage module both), and its gflags' refusal,
//! `Invalid value V for gflag --name`, for a value of the wrong type or out of range.

use crate::DataSet;
use quiver_common::budget::Limits;
use quiver_common::{QError, QResult, Value};
pub use quiver_syntax::ast::ConfigModule;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// The shortest deadline `UPDATE CONFIGS query_timeout_ms` sets.
pub const QUERY_TIMEOUT_MS_MIN: i64 = 100;
/// The smallest memory bound `UPDATE CONFIGS query_memory_bytes` sets.
pub const QUERY_MEMORY_BYTES_MIN: i64 = 16 << 20;

/// What a setting holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConfigType {
    /// An integer in `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
    Bool,
}

/// A setting's value, shared with the part that obeys it (a bool is 0 or 1).
pub type ConfigCell = Arc<AtomicI64>;

pub fn cell(value: i64) -> ConfigCell {
    Arc::new(AtomicI64::new(value))
}

struct Item {
    module: ConfigModule,
    name: &'static str,
    ty: ConfigType,
    cell: ConfigCell,
    /// Run after every change (say, to hand the new value to a library that keeps its own copy).
    on_change: Option<Arc<dyn Fn() + Send + Sync>>,
}

/// The registry of mutable settings.
#[derive(Default)]
pub struct Configs {
    items: Vec<Item>,
}

impl Configs {
    /// The engine's own settings: each request's deadline (`query_timeout_ms`) and memory bound
    /// (`query_memory_bytes`), whose cells are returned with the registry, and the log level. One process logs for
    /// every role, so the graph and the storage module's `minloglevel` and `v` are one pair.
    pub(crate) fn for_engine(limits: Limits) -> (Configs, ConfigCell, ConfigCell) {
        let query_timeout_ms = cell(limits.timeout.as_millis() as i64);
        let query_memory_bytes = cell(limits.memory_bytes as i64);
        let mut configs = Configs::default();
        // Floors under which no statement but these could run (the CONFIGS statements are exempt from the bounds
        // they set, so even at the floors the setting can be undone).
        let timeout = ConfigType::Int { min: QUERY_TIMEOUT_MS_MIN, max: i64::MAX };
        let memory = ConfigType::Int { min: QUERY_MEMORY_BYTES_MIN, max: i64::MAX };
        configs.register(ConfigModule::Graph, "query_timeout_ms", timeout, query_timeout_ms.clone());
        configs.register(ConfigModule::Graph, "query_memory_bytes", memory, query_memory_bytes.clone());
        let (minloglevel, v) = (cell(0), cell(0));
        let apply = {
            let (minloglevel, v) = (minloglevel.clone(), v.clone());
            Arc::new(move || {
                log::set_max_level(log_level(minloglevel.load(Ordering::Relaxed), v.load(Ordering::Relaxed)));
            }) as Arc<dyn Fn() + Send + Sync>
        };
        let level = ConfigType::Int { min: 0, max: 4 };
        let verbosity = ConfigType::Int { min: 0, max: i64::from(i32::MAX) };
        for module in [ConfigModule::Graph, ConfigModule::Storage] {
            configs.register_with(module, "minloglevel", level, minloglevel.clone(), Some(apply.clone()));
            configs.register_with(module, "v", verbosity, v.clone(), Some(apply.clone()));
        }
        (configs, query_timeout_ms, query_memory_bytes)
    }

    /// Registers a setting; a name registered twice in one module keeps its first cell.
    pub fn register(&mut self, module: ConfigModule, name: &'static str, ty: ConfigType, cell: ConfigCell) {
        self.register_with(module, name, ty, cell, None);
    }

    pub fn register_with(
        &mut self,
        module: ConfigModule,
        name: &'static str,
        ty: ConfigType,
        cell: ConfigCell,
        on_change: Option<Arc<dyn Fn() + Send + Sync>>,
    ) {
        if !self.items.iter().any(|i| i.module == module && i.name == name) {
            self.items.push(Item { module, name, ty, cell, on_change });
        }
    }

    fn find(&self, module: ConfigModule, name: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.module == module && i.name == name)
    }

    /// The modules a statement without one addresses: NebulaGraph's meta answers `ALL` from the graph and the
    /// storage module, and fails if either lacks the name.
    fn modules(module: Option<ConfigModule>) -> Vec<ConfigModule> {
        module.map_or_else(|| vec![ConfigModule::Graph, ConfigModule::Storage], |m| vec![m])
    }

    fn rows(items: &[&Item]) -> DataSet {
        let mut ds = DataSet::with_columns(&["module", "name", "type", "mode", "value"]);
        for i in items {
            let v = i.cell.load(Ordering::Relaxed);
            let (ty, value) = match i.ty {
                ConfigType::Int { .. } => ("int", Value::Int(v)),
                ConfigType::Bool => ("bool", Value::Bool(v != 0)),
            };
            ds.push_row([
                Value::str(i.module.name()),
                Value::str(i.name),
                Value::str(ty),
                Value::str("MUTABLE"),
                value,
            ]);
        }
        ds
    }

    /// `SHOW CONFIGS [module]`: by module, then by name.
    pub fn show(&self, module: Option<ConfigModule>) -> DataSet {
        let mut items: Vec<&Item> = self.items.iter().filter(|i| module.is_none_or(|m| i.module == m)).collect();
        items.sort_by(|a, b| (a.module, a.name).cmp(&(b.module, b.name)));
        Self::rows(&items)
    }

    /// `GET CONFIGS [module:]name`.
    pub fn get(&self, module: Option<ConfigModule>, name: &str) -> QResult<DataSet> {
        let items = Self::modules(module)
            .into_iter()
            .map(|m| self.find(m, name))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| QError::execution(format!("Get config `{name}' failed: Conf not existed!")))?;
        Ok(Self::rows(&items))
    }

    /// `UPDATE CONFIGS [module:]name = value`: every addressed module's setting, or none (all are checked first).
    pub fn set(&self, module: Option<ConfigModule>, name: &str, value: &Value) -> QResult<()> {
        let text = gflag_string(value);
        let invalid = |name: &str| QError::execution(format!("Invalid value {text} for gflag --{name}"));
        // The graph module's flags are gflags of the graph service itself, which refuses a name it lacks before its
        // meta service is asked.
        if module == Some(ConfigModule::Graph) && self.find(ConfigModule::Graph, name).is_none() {
            return Err(invalid(name));
        }
        let items = Self::modules(module)
            .into_iter()
            .map(|m| self.find(m, name))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| QError::execution(format!("Set config `{name}' failed: Conf not existed!")))?;
        let mut values = Vec::with_capacity(items.len());
        for i in &items {
            let parsed = match i.ty {
                ConfigType::Int { min, max } => text.parse::<i64>().ok().filter(|v| (min..=max).contains(v)),
                ConfigType::Bool => match text.to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" | "y" | "t" => Some(1),
                    "false" | "0" | "no" | "n" | "f" => Some(0),
                    _ => None,
                },
            };
            values
                .push(parsed.ok_or_else(|| QError::execution(format!("Invalid value {text} for gflag --{}", i.name)))?);
        }
        for (i, v) in items.iter().zip(values) {
            i.cell.store(v, Ordering::Relaxed);
            if let Some(f) = &i.on_change {
                f();
            }
        }
        Ok(())
    }
}

/// A value as gflags is handed it (NebulaGraph's `GflagsManager::ValueToGflagString`).
fn gflag_string(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.to_string(),
        Value::Map(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(_) | Value::Bool(_) => format!("\"{k}\":{v}"),
                    _ => format!("\"{k}\":\"{v}\""),
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The log level the `log` crate filters at, from NebulaGraph's `minloglevel` (0 INFO, 1 WARNING, 2 ERROR,
/// 3 FATAL and above: nothing) and `v` (verbose logging when above 0: 1 debug, 2 and above trace).
pub fn log_level(minloglevel: i64, v: i64) -> log::LevelFilter {
    match minloglevel {
        i64::MIN..=0 if v >= 2 => log::LevelFilter::Trace,
        i64::MIN..=0 if v == 1 => log::LevelFilter::Debug,
        i64::MIN..=0 => log::LevelFilter::Info,
        1 => log::LevelFilter::Warn,
        2 => log::LevelFilter::Error,
        _ => log::LevelFilter::Off,
    }
}
