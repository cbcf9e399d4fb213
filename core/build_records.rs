//! Reader and strict validator of `isa/records.tsv`, the instruction table (its banner describes
//! the columns). Used by `build.rs` (a bad table fails the build naming the line) and by
//! `tests/records_table.rs` (each refusal, tested). Standard library only.

/// What a field's bytes are (the `kind` and `domain` columns).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// byte\[0\], `constant opcode`: the record's own opcode.
    Opcode,
    /// A fixed byte (`inst_word_len`, `cross_core_enable`).
    Constant(u8),
    /// One byte from a closed table, named by the domain.
    Enum(&'static str),
    /// Unsigned little-endian integer.
    Integer,
    /// An integer that is a part of the 0x85 scratch descriptor.
    Scratch,
    /// An opaque access pattern.
    Ap,
    /// Must be zero.
    Reserved,
}

/// The closed tables an `enum` field may name.
pub const ENUM_DOMAINS: [&str; 7] = [
    "wait_mode",
    "update_mode",
    "dtype",
    "cce_op",
    "collective_kind",
    "arg_type",
    "flag",
];

/// The generations, in order (`since` column; bit `i` of an opcodes.tsv membership mask).
pub const GENERATIONS: [&str; 4] = ["v2", "v3", "v4", "v5"];

/// One field row.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Field {
    /// Line in the file.
    pub line: usize,
    /// Byte offset.
    pub offset: usize,
    /// Width in bytes.
    pub width: usize,
    /// Canonical name (`reserved` for reserved bytes).
    pub name: String,
    /// Kind and domain.
    pub kind: Kind,
    /// Source citation.
    pub source: String,
    /// A row of the shared skeleton (`field sync`), not of the record itself.
    pub shared: bool,
}

/// One record row and its fields, skeleton first.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Record {
    /// Line in the file.
    pub line: usize,
    /// byte\[0\].
    pub opcode: u8,
    /// SPEC §5.2 mnemonic.
    pub mnemonic: String,
    /// core's Rust type.
    pub type_name: String,
    /// Index into [`GENERATIONS`] of the first generation that emits it.
    pub since: usize,
    /// Bytes on the wire (64 or 128).
    pub length: usize,
    /// `Some("header" | "payload")`: the S000 validator gating its body.
    pub validator: Option<String>,
    /// Source citation.
    pub source: String,
    /// Every field, ascending, tiling 0..length.
    pub fields: Vec<Field>,
}

/// A refusal: the line (1-based; 0 = the file as a whole) and what is wrong.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TableError {
    /// Line in the file.
    pub line: usize,
    /// What is wrong, naming the bad value.
    pub reason: String,
}

fn err<T>(line: usize, reason: String) -> Result<T, TableError> {
    Err(TableError { line, reason })
}

fn hex_u8(line: usize, what: &str, s: &str) -> Result<u8, TableError> {
    match s.strip_prefix("0x").map(|h| u8::from_str_radix(h, 16)) {
        Some(Ok(v)) if s.len() == 4 => Ok(v),
        _ => err(line, format!("{what} must be 0xNN, got {s:?}")),
    }
}

fn number(line: usize, what: &str, s: &str) -> Result<usize, TableError> {
    let parsed = match s.strip_prefix("0x") {
        Some(h) => usize::from_str_radix(h, 16),
        None => s.parse(),
    };
    parsed.or_else(|_| err(line, format!("{what} must be a number, got {s:?}")))
}

fn columns(line: usize, row: &str, cols: &[&str], n: usize) -> Result<(), TableError> {
    if cols.len() == n {
        Ok(())
    } else {
        err(
            line,
            format!("a {row} row has {n} columns, found {}", cols.len()),
        )
    }
}

fn is_snake(s: &str) -> bool {
    s.bytes().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

fn is_camel(s: &str) -> bool {
    s.bytes().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.bytes().all(|c| c.is_ascii_alphanumeric())
}

fn kind_of(line: usize, kind: &str, domain: &str, width: usize) -> Result<Kind, TableError> {
    let k = match (kind, domain) {
        ("constant", "opcode") => Kind::Opcode,
        ("constant", v) => Kind::Constant(hex_u8(line, "constant value", v)?),
        ("enum", d) => match ENUM_DOMAINS.iter().find(|&&e| e == d) {
            Some(e) => Kind::Enum(e),
            None => return err(line, format!("unknown enum domain {d:?}")),
        },
        ("integer", "-") => Kind::Integer,
        ("integer", "scratch") => Kind::Scratch,
        ("ap", "-") => Kind::Ap,
        ("reserved", "-") => Kind::Reserved,
        ("integer" | "ap" | "reserved", d) => {
            return err(line, format!("kind {kind} takes no domain {d:?}"))
        }
        (k, _) => return err(line, format!("unknown kind {k:?}")),
    };
    let width_ok = match k {
        Kind::Opcode | Kind::Constant(_) | Kind::Enum(_) => width == 1,
        Kind::Integer | Kind::Scratch => matches!(width, 1 | 2 | 4 | 8),
        Kind::Ap => matches!(width, 16 | 32 | 48),
        Kind::Reserved => width > 0,
    };
    if !width_ok {
        return err(line, format!("width {width} is not a width of kind {kind}"));
    }
    Ok(k)
}

/// One row of isa/opcodes.tsv: (opcode, header name, generation bits: bit 0 = v2 … bit 3 = v5,
/// length on the wire in bytes: 64 or 128).
pub type RosterRow = (u8, String, u8, usize);

/// Parses and validates the table against the opcode roster (isa/opcodes.tsv).
pub fn parse(text: &str, roster: &[RosterRow]) -> Result<Vec<Record>, TableError> {
    let mut records: Vec<Record> = Vec::new();
    let mut skeleton: Vec<Field> = Vec::new();
    let mut skeleton_users: Vec<(usize, bool)> = Vec::new();
    let mut bodies: Vec<(usize, u8, Field)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = raw.split('\t').collect();
        match cols[0] {
            "record" => {
                columns(line, "record", &cols, 9)?;
                let opcode = hex_u8(line, "opcode", cols[1])?;
                if let Some(prev) = records.iter().find(|r| r.opcode == opcode) {
                    return err(
                        line,
                        format!("opcode {} already a record on line {}", cols[1], prev.line),
                    );
                }
                let (mnemonic, type_name) = (cols[2], cols[3]);
                if !is_camel(mnemonic) || !is_camel(type_name) {
                    return err(
                        line,
                        format!(
                            "mnemonic and type must be CamelCase, got {mnemonic:?} {type_name:?}"
                        ),
                    );
                }
                let since = GENERATIONS.iter().position(|&g| g == cols[4]).map_or_else(
                    || err(line, format!("since must be v2..v5, got {:?}", cols[4])),
                    Ok,
                )?;
                let members = roster.iter().find(|r| r.0 == opcode).map_or(0, |r| r.2);
                if members == 0 {
                    return err(
                        line,
                        format!("opcode {} is not in isa/opcodes.tsv", cols[1]),
                    );
                }
                if let Some(g) = (since..GENERATIONS.len()).find(|&g| members & (1 << g) == 0) {
                    return err(line, format!("opcode {} is emitted from {} but is not a {} opcode in isa/opcodes.tsv", cols[1], cols[4], GENERATIONS[g]));
                }
                let length = number(line, "length", cols[5])?;
                if length != 64 && length != 128 {
                    return err(line, format!("length must be 64 or 128, got {length}"));
                }
                let listed = roster.iter().find(|r| r.0 == opcode).map_or(0, |r| r.3);
                if length != listed {
                    return err(
                        line,
                        format!("length {length} but isa/opcodes.tsv gives {}", listed),
                    );
                }
                let uses_skeleton = match cols[6] {
                    "sync" => true,
                    "-" => false,
                    s => return err(line, format!("unknown skeleton {s:?}")),
                };
                let validator = match cols[7] {
                    "header" | "payload" => Some(cols[7].to_string()),
                    "-" => None,
                    v => return err(line, format!("unknown validator {v:?}")),
                };
                if cols[8].trim().is_empty() {
                    return err(line, "a record needs a source".to_string());
                }
                skeleton_users.push((records.len(), uses_skeleton));
                records.push(Record {
                    line,
                    opcode,
                    mnemonic: mnemonic.to_string(),
                    type_name: type_name.to_string(),
                    since,
                    length,
                    validator,
                    source: cols[8].to_string(),
                    fields: Vec::new(),
                });
            }
            "field" => {
                columns(line, "field", &cols, 8)?;
                let offset = number(line, "offset", cols[2])?;
                let width = number(line, "width", cols[3])?;
                let name = cols[4];
                if !is_snake(name) {
                    return err(line, format!("field name must be snake_case, got {name:?}"));
                }
                let kind = kind_of(line, cols[5], cols[6], width)?;
                if (kind == Kind::Reserved) != (name == "reserved") {
                    return err(line, format!("`reserved` is the name of reserved bytes only, got {name:?} of kind {}", cols[5]));
                }
                if (kind == Kind::Opcode) != (offset == 0) {
                    return err(line, format!("byte 0 and only byte 0 is `constant opcode`, got {name:?} at {offset:#04x}"));
                }
                if cols[7].trim().is_empty() {
                    return err(line, format!("field {name} needs a source"));
                }
                let field = Field {
                    line,
                    offset,
                    width,
                    name: name.to_string(),
                    kind,
                    source: cols[7].to_string(),
                    shared: cols[1] == "sync",
                };
                if cols[1] == "sync" {
                    skeleton.push(field);
                } else {
                    let owner = hex_u8(line, "owner", cols[1])?;
                    bodies.push((line, owner, field));
                }
            }
            other => {
                return err(
                    line,
                    format!("unknown row kind {other:?} (record or field)"),
                )
            }
        }
    }
    if records.is_empty() {
        return err(0, "no record rows".to_string());
    }
    for (idx, uses_skeleton) in skeleton_users {
        if uses_skeleton {
            records[idx].fields = skeleton.clone();
        }
    }
    for (line, owner, field) in bodies {
        match records.iter_mut().find(|r| r.opcode == owner) {
            Some(r) => r.fields.push(field),
            None => {
                return err(
                    line,
                    format!("field of {owner:#04X}, which has no record row"),
                )
            }
        }
    }
    for r in &records {
        check_tiling(r)?;
    }
    Ok(records)
}

/// Fields tile 0..length once, ascending; names are distinct (reserved aside).
fn check_tiling(r: &Record) -> Result<(), TableError> {
    let mut next = 0usize;
    for (k, f) in r.fields.iter().enumerate() {
        if f.offset < next {
            return err(
                f.line,
                format!(
                    "{:#04X} {} at {:#04x} overlaps the field before, which ends at {next:#04x}",
                    r.opcode, f.name, f.offset
                ),
            );
        }
        if f.offset > next {
            return err(
                f.line,
                format!(
                    "{:#04X}: gap {next:#04x}..{:#04x} before {}",
                    r.opcode, f.offset, f.name
                ),
            );
        }
        next = f.offset + f.width;
        if next > r.length {
            return err(
                f.line,
                format!(
                    "{:#04X} {} ends at {next:#04x}, past the record's {} bytes",
                    r.opcode, f.name, r.length
                ),
            );
        }
        if f.name != "reserved" && r.fields[..k].iter().any(|g| g.name == f.name) {
            return err(f.line, format!("{:#04X} names {} twice", r.opcode, f.name));
        }
    }
    if r.fields.first().map(|f| f.kind) != Some(Kind::Opcode) {
        return err(
            r.line,
            format!(
                "{:#04X} has no byte 0 (skeleton `-` and no opcode row)",
                r.opcode
            ),
        );
    }
    if next != r.length {
        return err(
            r.line,
            format!(
                "{:#04X}: fields end at {next:#04x}, the record is {} bytes",
                r.opcode, r.length
            ),
        );
    }
    Ok(())
}

/// Reads isa/opcodes.tsv, for [`parse`]. Malformed lines are refused.
pub fn parse_roster(text: &str) -> Result<Vec<RosterRow>, TableError> {
    let mut rows = Vec::new();
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if !header_seen {
            if cols != ["opcode", "name", "v2", "v3", "v4", "v5", "length"] {
                return err(lineno, "expected the column header line".to_string());
            }
            header_seen = true;
            continue;
        }
        if cols.len() != 7 {
            return err(lineno, "expected 7 tab-separated columns".to_string());
        }
        let op = hex_u8(lineno, "opcode", cols[0])?;
        let name = cols[1];
        if name.is_empty()
            || !name
                .bytes()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
        {
            return err(lineno, format!("bad name {name:?}"));
        }
        let mut mask = 0u8;
        for (g, c) in cols[2..6].iter().enumerate() {
            match *c {
                "1" => mask |= 1 << g,
                "0" => {}
                other => return err(lineno, format!("membership must be 0 or 1, got {other:?}")),
            }
        }
        let length = match cols[6] {
            "64" => 64,
            "128" => 128,
            other => return err(lineno, format!("length must be 64 or 128, got {other:?}")),
        };
        if rows.iter().any(|r: &RosterRow| r.0 == op) {
            return err(lineno, format!("opcode {} listed twice", cols[0]));
        }
        rows.push((op, name.to_string(), mask, length));
    }
    if rows.is_empty() {
        return err(0, "no rows".to_string());
    }
    Ok(rows)
}
