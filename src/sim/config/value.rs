//! [`Value`]: the value of one config key as `--set`, the panel, links, sweeps and
//! interventions pass it around — a number (kept at the precision of its field, so an `f32`
//! prints as the `f32` it is: `0.7`, not `0.699999988`), a whole number, a flag or an enum's
//! name. No systems live here.

use std::fmt;

/// One config key's value.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// A number read from an `f64` field or typed by a user.
    Float(f64),
    /// A number read from an `f32` field.
    Float32(f32),
    /// A whole number.
    Int(i64),
    /// `true` or `false`.
    Bool(bool),
    /// An enum's name as written in a scenario file (`seek_nearest`).
    Name(String),
}

impl Value {
    /// Parses what a user typed after `KEY=`: a TOML number, `inf`, `true`/`false`, a quoted or
    /// bare name.
    pub fn parse(text: &str) -> Value {
        let t = text.trim();
        match format!("v = {t}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut table| table.remove("v"))
        {
            Some(toml::Value::Float(x)) => Value::Float(x),
            Some(toml::Value::Integer(i)) => Value::Int(i),
            Some(toml::Value::Boolean(b)) => Value::Bool(b),
            Some(toml::Value::String(s)) => Value::Name(s),
            _ => Value::Name(t.to_string()),
        }
    }

    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(x) => Some(x),
            Value::Float32(x) => Some(x as f64),
            Value::Int(i) => Some(i as f64),
            Value::Bool(_) | Value::Name(_) => None,
        }
    }

    /// What kind of value this is, in a user's words ("the name `abc`").
    pub fn describe(&self) -> String {
        match self {
            Value::Float(_) | Value::Float32(_) => format!("the number {self}"),
            Value::Int(_) => format!("the whole number {self}"),
            Value::Bool(_) => format!("`{self}`"),
            Value::Name(s) => format!("`{s}`"),
        }
    }
}

/// Numbers people write with an exponent (`1e-9`, not 0.000000001).
fn tiny_or_huge(x: f64) -> bool {
    x != 0.0 && (x.abs() < 1e-4 || x.abs() >= 1e15)
}

impl fmt::Display for Value {
    /// As a user writes it: the shortest digits that read back to the same number, `inf` for
    /// an infinite time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(x) if x.is_infinite() => {
                write!(f, "{}inf", if *x < 0.0 { "-" } else { "" })
            }
            Value::Float32(x) if x.is_infinite() => {
                write!(f, "{}inf", if *x < 0.0 { "-" } else { "" })
            }
            Value::Float(x) if tiny_or_huge(*x) => write!(f, "{x:e}"),
            Value::Float32(x) if tiny_or_huge(*x as f64) => write!(f, "{x:e}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Float32(x) => write!(f, "{x}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Name(s) => write!(f, "{s}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_becomes_the_value_a_user_means() {
        assert_eq!(Value::parse("1.5"), Value::Float(1.5));
        assert_eq!(Value::parse("300"), Value::Int(300));
        assert_eq!(Value::parse("inf"), Value::Float(f64::INFINITY));
        assert_eq!(Value::parse("true"), Value::Bool(true));
        assert_eq!(Value::parse("\"bounce\""), Value::Name("bounce".into()));
        assert_eq!(
            Value::parse("seek_nearest"),
            Value::Name("seek_nearest".into())
        );
        assert_eq!(Value::parse("abc"), Value::Name("abc".into()));
    }

    #[test]
    fn numbers_print_at_their_own_precision() {
        assert_eq!(Value::Float32(0.7).to_string(), "0.7");
        assert_eq!(Value::Float(0.7f32 as f64).to_string(), "0.699999988079071");
        assert_eq!(Value::Float(f64::INFINITY).to_string(), "inf");
        assert_eq!(Value::Float(1e-5).to_string(), "1e-5");
        assert_eq!(Value::Float(1e-300).to_string(), "1e-300");
        assert_eq!(Value::parse("1e-300"), Value::Float(1e-300));
    }
}
