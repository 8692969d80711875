//! A small JSON reader: text to a [`Json`] tree, then to a type through [`FromJson`].
//!
//! The replay writes recordings with serde's `Serialize` and serde_json; the page reads them
//! back with this instead of serde's derived `Deserialize` and serde_json, which were a fifth
//! of the page's wasm. The readers (next to each type) mirror what the derives wrote:
//! externally tagged enums (a unit variant as its name, any other as a one-key object),
//! `Result` as `{"Ok": …}` / `{"Err": …}`, a newtype struct as its inner value, unknown keys
//! ignored, a missing `Option` field read as `None`, and a field older recordings predate
//! (once `#[serde(default)]`) read as its default.

use std::fmt;

/// Deepest nesting read: a pasted `[[[[…` must not exhaust the stack. A trace nests about 8
/// deep; serde_json stops at 128 too.
pub const MAX_DEPTH: usize = 128;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number as written: integers are read from the text exactly (tokens and times are
    /// u64, which an f64 would round).
    Number(String),
    String(String),
    Array(Vec<Json>),
    /// Keys and values in written order, duplicates kept (a struct's reader refuses them).
    Object(Vec<(String, Json)>),
}

/// What is wrong and where: `line 3, column 14` in the text for a syntax error, a path such
/// as `events[3].kind` in the value for one of shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    place: String,
    what: String,
}

impl JsonError {
    /// A shape error at the value being read; callers add the path on the way out.
    fn shape(what: String) -> Self {
        Self {
            place: String::new(),
            what,
        }
    }

    /// The same error, one step further from the root: a key, a variant or `[i]`.
    fn within(mut self, step: &str) -> Self {
        if !step.is_empty() {
            let dot = if self.place.is_empty() || self.place.starts_with('[') {
                ""
            } else {
                "."
            };
            self.place = format!("{step}{dot}{}", self.place);
        }
        self
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.place.is_empty() {
            f.write_str(&self.what)
        } else {
            write!(f, "{}: {}", self.place, self.what)
        }
    }
}

impl std::error::Error for JsonError {}

/// Reads `text` as a `T`: one JSON value, nothing after it but whitespace.
pub fn read<T: FromJson>(text: &str) -> Result<T, JsonError> {
    T::from_json(&parse(text)?)
}

/// Parses `text` as one JSON value (RFC 8259), nothing after it but whitespace.
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut p = Parser {
        text,
        at: 0,
        depth: 0,
    };
    let value = p.value()?;
    p.skip_space();
    if p.at < text.len() {
        return Err(p.fail("expected the end of the text"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.at += usize::from(hit);
        hit
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), JsonError> {
        self.skip_space();
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.fail(what))
        }
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A syntax error at the current position, saying what was found there.
    fn fail(&self, what: &str) -> JsonError {
        let before = &self.text.as_bytes()[..self.at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1);
        // Columns count characters: skip UTF-8 continuation bytes.
        let column = before[line_start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count()
            + 1;
        let found = match self.text[self.at..].chars().next() {
            None => "the end".to_owned(),
            Some(c) if c.is_control() => format!("`{}`", c.escape_debug()),
            Some(c) => format!("`{c}`"),
        };
        JsonError {
            place: format!("line {line}, column {column}"),
            what: format!("{what}, found {found}"),
        }
    }

    fn value(&mut self) -> Result<Json, JsonError> {
        self.skip_space();
        match self.peek() {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            _ => Err(self.fail("expected a value")),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, JsonError> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.fail("expected a value"))
        }
    }

    /// An array or object, one level deeper (refused past [`MAX_DEPTH`]).
    fn nested(
        &mut self,
        read: fn(&mut Self) -> Result<Json, JsonError>,
    ) -> Result<Json, JsonError> {
        if self.depth == MAX_DEPTH {
            return Err(self.fail(&format!("nested more than {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        self.at += 1; // `[` or `{`
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn array(&mut self) -> Result<Json, JsonError> {
        let mut items = Vec::new();
        self.skip_space();
        if self.eat(b']') {
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_space();
            if self.eat(b']') {
                return Ok(Json::Array(items));
            }
            self.expect(b',', "expected `,` or `]`")?;
        }
    }

    fn object(&mut self) -> Result<Json, JsonError> {
        let mut entries = Vec::new();
        self.skip_space();
        if self.eat(b'}') {
            return Ok(Json::Object(entries));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.fail("expected a key in double quotes"));
            }
            let key = self.string()?;
            self.expect(b':', "expected `:`")?;
            entries.push((key, self.value()?));
            self.skip_space();
            if self.eat(b'}') {
                return Ok(Json::Object(entries));
            }
            self.expect(b',', "expected `,` or `}`")?;
        }
    }

    /// A number's text, checked against JSON's grammar: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.at;
        self.eat(b'-');
        if !self.eat(b'0') {
            self.digits()?;
        }
        if self.eat(b'.') {
            self.digits()?;
        }
        if self.eat(b'e') || self.eat(b'E') {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            self.digits()?;
        }
        Ok(Json::Number(self.text[start..self.at].to_owned()))
    }

    fn digits(&mut self) -> Result<(), JsonError> {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        if self.at == start {
            return Err(self.fail("expected a digit"));
        }
        Ok(())
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1; // `"`
        let mut out = String::new();
        loop {
            let start = self.at;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            // Stopped at an ASCII byte (or the end): a character boundary.
            out.push_str(&self.text[start..self.at]);
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    out.push(self.escape()?);
                }
                Some(_) => return Err(self.fail("expected a control character to be escaped")),
                None => return Err(self.fail("expected `\"` to close the string")),
            }
        }
    }

    /// The character an escape stands for; `at` is just past the backslash.
    fn escape(&mut self) -> Result<char, JsonError> {
        let c = match self.peek() {
            Some(b'u') => return self.unicode(),
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            _ => return Err(self.fail("expected an escape (\\n, \\\", \\u00e9, …)")),
        };
        self.at += 1;
        Ok(c)
    }

    /// `\uXXXX`, or a UTF-16 surrogate pair `\uD83D\uDE00`; a lone surrogate is no character.
    fn unicode(&mut self) -> Result<char, JsonError> {
        const LOW: &str = "expected a low surrogate (`\\uDC00`–`\\uDFFF`) after a high one";
        let escape = self.at - 1;
        let high = self.hex4()?;
        if let Some(c) = char::from_u32(high) {
            return Ok(c); // not a surrogate
        }
        if high >= 0xDC00 {
            self.at = escape;
            return Err(
                self.fail("expected a high surrogate (`\\uD800`–`\\uDBFF`) before a low one")
            );
        }
        let second = self.at;
        if !self.text[self.at..].starts_with("\\u") {
            return Err(self.fail(LOW));
        }
        self.at += 1;
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            self.at = second;
            return Err(self.fail(LOW));
        }
        // A pair always makes a character (0x10000..=0x10FFFF).
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        Ok(char::from_u32(code).unwrap_or_default())
    }

    /// `uXXXX`: four hex digits after the `u`.
    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .text
            .get(self.at + 1..self.at + 5)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        let Some(code) = digits.and_then(|d| u32::from_str_radix(d, 16).ok()) else {
            return Err(self.fail("expected four hex digits in `\\uXXXX`"));
        };
        self.at += 5;
        Ok(code)
    }
}

/// A type read from a [`Json`] value, as serde's derived `Deserialize` would read it.
pub trait FromJson: Sized {
    fn from_json(json: &Json) -> Result<Self, JsonError>;

    /// What an absent struct field reads as: an error, except for an `Option` (`None`), as
    /// with serde.
    fn missing() -> Option<Self> {
        None
    }
}

impl Json {
    /// The error for a value of the wrong kind.
    fn unexpected(&self, expected: &str) -> JsonError {
        let found = match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(n) => n,
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        };
        JsonError::shape(format!("expected {expected}, found {found}"))
    }

    /// This object as the fields of a struct.
    pub fn fields(&self) -> Result<Fields<'_>, JsonError> {
        match self {
            Json::Object(entries) => Ok(Fields {
                entries,
                within: "",
            }),
            other => Err(other.unexpected("an object")),
        }
    }

    /// This value as an externally tagged enum: a unit variant's name, or `{"Name": body}`.
    pub fn variant(&self) -> Result<Variant<'_>, JsonError> {
        match self {
            Json::String(name) => Ok(Variant { name, body: None }),
            Json::Object(entries) if entries.len() == 1 => Ok(Variant {
                name: &entries[0].0,
                body: Some(&entries[0].1),
            }),
            other => Err(other.unexpected("a variant name or an object with one key")),
        }
    }

    /// An enum whose variants are all units, by name: `json.one_of(&[("off", Off), …])`.
    pub fn one_of<T: Copy>(&self, choices: &[(&str, T)]) -> Result<T, JsonError> {
        let v = self.variant()?;
        match choices.iter().find(|c| c.0 == v.name) {
            Some(&(_, value)) => v.unit(value),
            None => Err(v.unknown()),
        }
    }

    /// The text of an integer: a fraction or an exponent is a float, which serde refuses too.
    fn integer(&self) -> Result<&str, JsonError> {
        match self {
            Json::Number(n) if !n.contains(['.', 'e', 'E']) => Ok(n),
            other => Err(other.unexpected("an integer")),
        }
    }
}

/// An object read as a struct's fields (or a struct variant's, named `within`).
pub struct Fields<'a> {
    entries: &'a [(String, Json)],
    within: &'a str,
}

impl Fields<'_> {
    /// A field that must be there (unless `T` is an `Option`).
    pub fn field<T: FromJson>(&self, name: &str) -> Result<T, JsonError> {
        self.read(name, T::missing())
    }

    /// A field older files may lack (once `#[serde(default)]`): `T::default()` when absent.
    pub fn field_or_default<T: FromJson + Default>(&self, name: &str) -> Result<T, JsonError> {
        self.read(name, Some(T::default()))
    }

    fn read<T: FromJson>(&self, name: &str, missing: Option<T>) -> Result<T, JsonError> {
        let mut found = self.entries.iter().filter(|(k, _)| k == name);
        let value = match (found.next(), found.next()) {
            (Some((_, json)), None) => T::from_json(json).map_err(|e| e.within(name)),
            (None, _) => missing.ok_or_else(|| JsonError::shape(format!("missing field `{name}`"))),
            (Some(_), Some(_)) => Err(JsonError::shape(format!("duplicate field `{name}`"))),
        };
        value.map_err(|e| e.within(self.within))
    }
}

/// One variant of an externally tagged enum: its name, and its body unless it is a unit.
pub struct Variant<'a> {
    pub name: &'a str,
    body: Option<&'a Json>,
}

impl<'a> Variant<'a> {
    /// A unit variant: the name alone (or `{"Name": null}`, which serde also reads).
    pub fn unit<T>(&self, value: T) -> Result<T, JsonError> {
        match self.body {
            None | Some(Json::Null) => Ok(value),
            Some(other) => Err(other.unexpected("null (a unit variant)").within(self.name)),
        }
    }

    /// A newtype variant: `{"Name": value}`.
    pub fn newtype<T: FromJson>(&self) -> Result<T, JsonError> {
        self.body()
            .and_then(T::from_json)
            .map_err(|e| e.within(self.name))
    }

    /// A struct variant: `{"Name": {fields}}`.
    pub fn fields(&self) -> Result<Fields<'a>, JsonError> {
        let entries = self
            .body()
            .and_then(Json::fields)
            .map_err(|e| e.within(self.name))?
            .entries;
        Ok(Fields {
            entries,
            within: self.name,
        })
    }

    /// The error for a name the enum does not have.
    pub fn unknown(&self) -> JsonError {
        JsonError::shape(format!("unknown variant `{}`", self.name))
    }

    fn body(&self) -> Result<&'a Json, JsonError> {
        self.body
            .ok_or_else(|| JsonError::shape("expected a value, not a unit variant".to_owned()))
    }
}

impl FromJson for bool {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        match json {
            Json::Bool(b) => Ok(*b),
            other => Err(other.unexpected("true or false")),
        }
    }
}

impl FromJson for String {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        match json {
            Json::String(s) => Ok(s.clone()),
            other => Err(other.unexpected("a string")),
        }
    }
}

/// `Ok(())` is written `{"Ok": null}`.
impl FromJson for () {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        match json {
            Json::Null => Ok(()),
            other => Err(other.unexpected("null")),
        }
    }
}

/// An integer from its exact text (never through f64).
fn integer<T: std::str::FromStr>(json: &Json, ty: &str) -> Result<T, JsonError> {
    let text = json.integer()?;
    text.parse()
        .map_err(|_| JsonError::shape(format!("{text} is out of range for {ty}")))
}

impl FromJson for u64 {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        integer(json, "u64")
    }
}

impl FromJson for i64 {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        integer(json, "i64")
    }
}

impl FromJson for usize {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        integer(json, "usize")
    }
}

/// `null` is `None`. (So `Some(None)` of an `Option<Option<_>>`, which serde also writes
/// as `null`, reads back as `None`, as with serde.)
impl<T: FromJson> FromJson for Option<T> {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        match json {
            Json::Null => Ok(None),
            json => T::from_json(json).map(Some),
        }
    }

    fn missing() -> Option<Self> {
        Some(None)
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        let Json::Array(items) = json else {
            return Err(json.unexpected("an array"));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| T::from_json(item).map_err(|e| e.within(&format!("[{i}]"))))
            .collect()
    }
}

impl<T: FromJson, E: FromJson> FromJson for Result<T, E> {
    fn from_json(json: &Json) -> Result<Self, JsonError> {
        let v = json.variant()?;
        match v.name {
            "Ok" => v.newtype().map(Ok),
            "Err" => v.newtype().map(Err),
            _ => Err(v.unknown()),
        }
    }
}
