//! From a subgraph's `def.json` to its engines' instruction files (FACTS §10; SPEC §12).
//!
//! Which keys lead there is not documented (FACTS §10 "Open"), so both schemas \[R\] reports are
//! read, per engine:
//! - schema B: `<eng>_instr` in def.json names the instruction file (`PE.bin`);
//! - schema A: `<eng>` in def.json names the engine JSON (`pe.json`), whose `instr` names it;
//!
//! (`<eng>`: `pe`, `act` or `activation`, `pool`, `dve`, `sp`; keys and file names matched
//! without regard to case; B wins where both are given). Where def.json has neither, or there
//! is no def.json, the engine-named members of the folder are the streams (`PE.bin`,
//! `Activation.bin` / `act.bin`, `Pool.bin`, `DVE.bin`, `SP.bin`), and the plan says so. A
//! `.bin` name alone never makes a stream. Names are relative to the subgraph's folder (a name
//! that already starts with it is taken from the archive's root).

use crate::NeffError;
use serde_json::Value;

/// A compute engine of a subgraph (FACTS §10: PE, Pool, Activation, DVE, SP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Engine {
    /// The tensor (matmul) engine.
    Pe,
    /// The activation engine (`act`).
    Act,
    /// The pool engine.
    Pool,
    /// The vector engine.
    Dve,
    /// The sync engine.
    Sp,
}

impl Engine {
    /// Every engine, in the order they are reported.
    pub const ALL: [Engine; 5] = [
        Engine::Pe,
        Engine::Act,
        Engine::Pool,
        Engine::Dve,
        Engine::Sp,
    ];

    /// Its row of [`NAMES`].
    fn names(&self) -> &'static EngineNames {
        &NAMES[*self as usize]
    }

    /// The name printed (`PE`, `Activation`, `Pool`, `DVE`, `SP`).
    pub fn name(&self) -> &'static str {
        self.names().0
    }

    /// The engine a name means (`--engine NAME=…`, a key), without regard to case.
    pub fn parse(s: &str) -> Option<Engine> {
        let l = s.to_ascii_lowercase();
        Engine::ALL
            .into_iter()
            .find(|e| e.keys().contains(&l.as_str()) || e.name().eq_ignore_ascii_case(&l))
    }

    /// def.json keys naming it (schema A; `_instr` appended: schema B).
    fn keys(&self) -> &'static [&'static str] {
        self.names().1
    }

    /// Member names of the fallback (lower case).
    fn fallback(&self) -> &'static [&'static str] {
        self.names().2
    }
}

/// An engine's printed name, def.json keys and fallback member names.
type EngineNames = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

/// [`EngineNames`] in [`Engine::ALL`] order.
const NAMES: [EngineNames; 5] = [
    ("PE", &["pe"], &["pe.bin"]),
    (
        "Activation",
        &["act", "activation"],
        &["activation.bin", "act.bin"],
    ),
    ("Pool", &["pool"], &["pool.bin"]),
    ("DVE", &["dve"], &["dve.bin"]),
    ("SP", &["sp"], &["sp.bin"]),
];

/// How an engine's instruction file was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// def.json key `<eng>_instr` (schema B).
    InstrKey {
        /// The key as written.
        key: String,
    },
    /// def.json key `<eng>` names the engine JSON, whose `instr` names the file (schema A).
    EngineJson {
        /// The def.json key as written.
        key: String,
        /// The engine JSON member.
        json: String,
    },
    /// No schema: an engine-named member (`def_json`: whether there was a def.json at all).
    Fallback {
        /// A def.json without either schema (true) or no def.json (false).
        def_json: bool,
    },
    /// `--engine NAME=…` on the command line.
    Override,
}

impl How {
    /// In words, for `neff info` and notes.
    pub fn text(&self, def: &str) -> String {
        match self {
            How::InstrKey { key } => format!("named by {def} key \"{key}\" (schema <eng>_instr)"),
            How::EngineJson { key, json } => format!(
                "named by {json} key \"instr\" ({def} key \"{key}\" names {json}; schema <eng> -> <eng>.json)"
            ),
            How::Fallback { def_json: true } => format!(
                "engine-named member (fallback: {def} has neither key schema)"
            ),
            How::Fallback { def_json: false } => {
                "engine-named member (fallback: the subgraph has no def.json)".to_string()
            }
            How::Override => "given with --engine".to_string(),
        }
    }
}

/// One DMA descriptor of an engine JSON's `dma` list (FACTS §10 D1): its completion adds
/// `increment` to `semaphore`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaIncrement {
    /// `id` (ties it to a trigger instruction in the engine's stream), as text.
    pub id: String,
    /// `queue`: the queue set's name.
    pub queue: Option<String>,
    /// `semaphore`: the semaphore incremented at completion.
    pub semaphore: Option<u32>,
    /// The queue set's `num_queues` (def.json `dma_queue`), where the set is declared.
    pub num_queues: Option<u32>,
}

impl DmaIncrement {
    /// What one completion adds: `num_queues` for a declared queue set (FACTS §10: "by
    /// num_queues for a multi-queue set"); `None` where the set is not declared (not guessed).
    pub fn increment(&self) -> Option<u32> {
        self.num_queues
    }
}

/// One engine of a subgraph: where its stream is and its DMA increments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnginePlan {
    /// The engine.
    pub engine: Engine,
    /// The candidate member paths of its stream, lower case (one, named; or the fallback's).
    pub names: Vec<String>,
    /// How they were found.
    pub how: How,
    /// The engine JSON's `dma` list (schema A), empty otherwise.
    pub dma: Vec<DmaIncrement>,
}

/// Lower-case full path of `named`, relative to `folder` (or to the root when it starts with
/// `folder/`); `..`, absolute or empty names are an error of `by`.
fn member_path(folder: &str, named: &str, by: &str, key: &str) -> Result<String, NeffError> {
    let (n, _) = crate::tar::normalize(named.as_bytes()).map_err(|r| NeffError::Json {
        member: by.to_string(),
        reason: format!("key {key} names {named:?}: {r}"),
    })?;
    if n.is_empty() {
        return Err(NeffError::Json {
            member: by.to_string(),
            reason: format!("key {key} names an empty path"),
        });
    }
    let l = n.to_ascii_lowercase();
    let prefix = format!("{}/", folder.to_ascii_lowercase());
    Ok(if l.starts_with(&prefix) {
        l
    } else {
        format!("{prefix}{l}")
    })
}

/// The key of `obj` equal to `want` without regard to case (two such keys: an error).
fn key_of<'a>(
    obj: &'a serde_json::Map<String, Value>,
    want: &str,
    by: &str,
) -> Result<Option<(&'a str, &'a Value)>, NeffError> {
    let mut found = obj
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(want))
        .map(|(k, v)| (k.as_str(), v));
    let first = found.next();
    if let Some((k2, _)) = found.next() {
        return Err(NeffError::Json {
            member: by.to_string(),
            reason: format!(
                "keys {:?} and {k2:?} differ only in case",
                first.map(|f| f.0)
            ),
        });
    }
    Ok(first)
}

fn string_at<'a>(v: &'a Value, by: &str, key: &str) -> Result<&'a str, NeffError> {
    v.as_str().ok_or_else(|| NeffError::Json {
        member: by.to_string(),
        reason: format!("key {key}: expected a file name (a string), found {v}"),
    })
}

/// A JSON member by lower-case path: its name and its value (`Err`: why it did not parse).
pub type JsonLookup<'a> = dyn Fn(&str) -> Option<(String, Result<Value, String>)> + 'a;

/// What deciding a subgraph gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// def.json, or an engine JSON it names, is not read yet (its lower-case path).
    Waiting(String),
    /// Every engine's stream candidates are known.
    Ready(Vec<EnginePlan>),
}

/// Decides subgraph `folder`'s engines from its def.json (`def`: member name and value) and
/// the JSON members read so far (`json`, by lower-case path: `Err` = did not parse). `last`:
/// nothing more will be read (a missing JSON is then an error).
pub fn decide(
    folder: &str,
    def: Option<(&str, &Value)>,
    json: &JsonLookup<'_>,
    last: bool,
) -> Result<Decision, NeffError> {
    let Some((def_name, def)) = def else {
        // No def.json yet: it may still come (the tar's order is arbitrary, SPEC §12.4).
        if !last {
            return Ok(Decision::Waiting(format!(
                "{}/def.json",
                folder.to_ascii_lowercase()
            )));
        }
        return Ok(Decision::Ready(fallback(folder, false)));
    };
    let obj = def.as_object().ok_or_else(|| NeffError::Json {
        member: def_name.to_string(),
        reason: "not a JSON object".into(),
    })?;
    let queues = dma_queues(def, def_name)?;
    let mut plans = Vec::new();
    for engine in Engine::ALL {
        let mut b = None;
        let mut a = None;
        for k in engine.keys() {
            if let Some(hit) = key_of(obj, &format!("{k}_instr"), def_name)? {
                b = b.or(Some(hit));
            }
            if let Some(hit) = key_of(obj, k, def_name)? {
                a = a.or(Some(hit));
            }
        }
        if let Some((key, v)) = b {
            let named = string_at(v, def_name, key)?;
            plans.push(EnginePlan {
                engine,
                names: vec![member_path(folder, named, def_name, key)?],
                how: How::InstrKey {
                    key: key.to_string(),
                },
                dma: Vec::new(),
            });
        } else if let Some((key, v)) = a {
            let named = string_at(v, def_name, key)?;
            let path = member_path(folder, named, def_name, key)?;
            let Some((json_name, parsed)) = json(&path) else {
                if last {
                    return Err(NeffError::Missing {
                        by: def_name.to_string(),
                        key: key.to_string(),
                        named: named.to_string(),
                        reason: "no such member (or not a .json member of the subgraph)",
                    });
                }
                return Ok(Decision::Waiting(path));
            };
            let ej = parsed.map_err(|reason| NeffError::Json {
                member: json_name.clone(),
                reason,
            })?;
            let eobj = ej.as_object().ok_or_else(|| NeffError::Json {
                member: json_name.clone(),
                reason: "not a JSON object".into(),
            })?;
            let names = match key_of(eobj, "instr", &json_name)? {
                Some((k, v)) => vec![member_path(
                    folder,
                    string_at(v, &json_name, k)?,
                    &json_name,
                    k,
                )?],
                // No `instr`: this engine names no stream (said by `neff info`).
                None => Vec::new(),
            };
            plans.push(EnginePlan {
                engine,
                names,
                how: How::EngineJson {
                    key: key.to_string(),
                    json: json_name.clone(),
                },
                dma: dma_list(&ej, &json_name, &queues)?,
            });
        }
    }
    if plans.is_empty() {
        return Ok(Decision::Ready(fallback(folder, true)));
    }
    Ok(Decision::Ready(plans))
}

fn fallback(folder: &str, def_json: bool) -> Vec<EnginePlan> {
    let f = folder.to_ascii_lowercase();
    Engine::ALL
        .into_iter()
        .map(|engine| EnginePlan {
            engine,
            names: engine
                .fallback()
                .iter()
                .map(|n| format!("{f}/{n}"))
                .collect(),
            how: How::Fallback { def_json },
            dma: Vec::new(),
        })
        .collect()
}

/// def.json's `dma_queue`: queue-set name → num_queues. An object of sets by name, or an
/// array of sets with a `name`; absent: none.
fn dma_queues(def: &Value, by: &str) -> Result<Vec<(String, Option<u32>)>, NeffError> {
    let bad = |reason: String| NeffError::Json {
        member: by.to_string(),
        reason,
    };
    let num = |set: &Value, name: &str| -> Result<Option<u32>, NeffError> {
        match set.get("num_queues") {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| bad(format!("dma_queue {name:?}: num_queues {v} is not a u32"))),
        }
    };
    let mut out = Vec::new();
    match def.get("dma_queue") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (name, set) in m {
                out.push((name.clone(), num(set, name)?));
            }
        }
        Some(Value::Array(a)) => {
            for (i, set) in a.iter().enumerate() {
                let name = match set.get("name") {
                    Some(Value::String(s)) => s.clone(),
                    _ => return Err(bad(format!("dma_queue[{i}]: no string \"name\""))),
                };
                let n = num(set, &name)?;
                out.push((name, n));
            }
        }
        Some(v) => {
            return Err(bad(format!(
                "dma_queue: expected an object or array, found {v}"
            )))
        }
    }
    Ok(out)
}

/// An engine JSON's `dma` list (FACTS §10 D1: id, queue, semaphore).
fn dma_list(
    ej: &Value,
    by: &str,
    queues: &[(String, Option<u32>)],
) -> Result<Vec<DmaIncrement>, NeffError> {
    let bad = |reason: String| NeffError::Json {
        member: by.to_string(),
        reason,
    };
    let list = match ej.get("dma") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(v) => return Err(bad(format!("dma: expected an array, found {v}"))),
    };
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, d) in list.iter().enumerate() {
        let id = d
            .get("id")
            .and_then(text)
            .ok_or_else(|| bad(format!("dma[{i}]: no \"id\" (a number or string)")))?;
        let queue = match d.get("queue") {
            None | Some(Value::Null) => None,
            Some(v) => Some(text(v).ok_or_else(|| bad(format!("dma[{i}].queue: {v}")))?),
        };
        let semaphore =
            match d.get("semaphore") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(
                    || bad(format!("dma[{i}].semaphore: {v} is not a semaphore index")),
                )?),
            };
        let num_queues = queue
            .as_ref()
            .and_then(|q| queues.iter().find(|(n, _)| n == q))
            .and_then(|(_, n)| *n);
        out.push(DmaIncrement {
            id,
            queue,
            semaphore,
            num_queues,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn none(_: &str) -> Option<(String, Result<Value, String>)> {
        None
    }

    #[test]
    fn schema_b_names_the_stream_directly_without_regard_to_case() {
        let def = json!({"PE_instr": "PE.bin", "act_instr": "Activation.bin"});
        let Decision::Ready(p) =
            decide("sg00", Some(("sg00/def.json", &def)), &none, false).unwrap()
        else {
            panic!()
        };
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].names, vec!["sg00/pe.bin"]);
        assert_eq!(p[1].engine, Engine::Act);
    }

    #[test]
    fn schema_a_waits_for_the_engine_json_then_reads_instr_and_dma() {
        let def = json!({"pool": "pool.json", "dma_queue": {"q0": {"num_queues": 16}}});
        let d = decide("sg01", Some(("sg01/def.json", &def)), &none, false).unwrap();
        assert_eq!(d, Decision::Waiting("sg01/pool.json".into()));
        assert!(matches!(
            decide("sg01", Some(("sg01/def.json", &def)), &none, true),
            Err(NeffError::Missing { .. })
        ));
        let ej = json!({"instr": "Pool.bin", "dma": [{"id": 3, "queue": "q0", "semaphore": 45}]});
        let lookup = |p: &str| {
            (p == "sg01/pool.json").then(|| ("sg01/pool.json".to_string(), Ok(ej.clone())))
        };
        let Decision::Ready(p) =
            decide("sg01", Some(("sg01/def.json", &def)), &lookup, false).unwrap()
        else {
            panic!()
        };
        assert_eq!(p[0].names, vec!["sg01/pool.bin"]);
        assert_eq!(p[0].dma[0].semaphore, Some(45));
        assert_eq!(p[0].dma[0].increment(), Some(16));
    }

    #[test]
    fn neither_schema_falls_back_to_engine_names_and_says_so() {
        let def = json!({"var": {}});
        let Decision::Ready(p) =
            decide("sg00", Some(("sg00/def.json", &def)), &none, false).unwrap()
        else {
            panic!()
        };
        assert_eq!(p.len(), 5);
        assert_eq!(p[0].how, How::Fallback { def_json: true });
        let bad = json!({"pe_instr": "../../etc/passwd"});
        assert!(matches!(
            decide("sg00", Some(("sg00/def.json", &bad)), &none, false),
            Err(NeffError::Json { .. })
        ));
    }
}
