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
    /// A shape error at the value being read; the readers above it add the path.
    fn shape(what: String) -> Self {
        Self {
            place: String::new(),
            what,
        }
    }

    /// The same error, one step further from the root: a key, a variant or `[i]` (none if
    /// empty).
    fn within(&mut self, step: &str) {
        let place = &mut self.place;
        if !step.is_empty() {
            let dot = if place.is_empty() || place.starts_with('[') {
                ""
            } else {
                "."
            };
            *place = format!("{step}{dot}{place}");
        }
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
    let json = parse(text)?;
    let mut err = FirstError(None);
    let value = T::from_json(&json, &mut err);
    err.0.map_or(Ok(value), Err)
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
            Some(c) if c.is_control() => format!("U+{:04X}", u32::from(c)),
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
///
/// A reader never fails midway: on a mismatch it notes the error in `err` and goes on with a
/// stand-in value, and [`read`] returns the first error instead of the value. So a reader is
/// a straight line of field reads, with no early return (and its clean-up code) after each:
/// 17 KB less wasm than the same readers returning `Result` with `?` after every field.
pub trait FromJson: Sized {
    fn from_json(json: &Json, err: &mut FirstError) -> Self;

    /// What an absent struct field reads as: an error, except for an `Option` (`None`), as
    /// with serde.
    fn missing() -> Option<Self> {
        None
    }
}

/// The first error a read met, if any; later ones add nothing.
#[derive(Debug)]
pub struct FirstError(Option<JsonError>);

impl FirstError {
    fn clean(&self) -> bool {
        self.0.is_none()
    }

    #[cold]
    fn fail(&mut self, e: JsonError) {
        if self.clean() {
            self.0 = Some(e);
        }
    }

    /// Notes `e`, met under `steps` (innermost first).
    #[cold]
    fn fail_in(&mut self, mut e: JsonError, steps: &[&str]) {
        steps.iter().for_each(|step| e.within(step));
        self.fail(e);
    }

    /// Puts the error, if there is one, under `steps` (innermost first): for the reader that
    /// was clean before a part it read.
    fn place(&mut self, steps: &[&str]) {
        if let Some(e) = &mut self.0 {
            steps.iter().for_each(|step| e.within(step));
        }
    }

    /// `json` read as a `T`; an error met in it is placed under `steps`.
    fn read<T: FromJson>(&mut self, json: &Json, steps: &[&str]) -> T {
        let was_clean = self.clean();
        let value = T::from_json(json, self);
        if was_clean {
            self.place(steps);
        }
        value
    }
}

/// What a stand-in is read from: `null`, which every reader turns into some value.
const NULL: &Json = &Json::Null;

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

    /// This object as the fields of a struct (none if it is not an object).
    pub fn fields<'a>(&'a self, err: &'a mut FirstError) -> Fields<'a> {
        let entries = match self {
            Json::Object(entries) => entries.as_slice(),
            other => {
                err.fail(other.unexpected("an object"));
                &[]
            }
        };
        Fields {
            entries,
            within: "",
            err,
        }
    }

    /// This value as an externally tagged enum: a unit variant's name, or `{"Name": body}`.
    pub fn variant<'a>(&'a self, err: &'a mut FirstError) -> Variant<'a> {
        let (name, body) = match self {
            Json::String(name) => (name.as_str(), None),
            Json::Object(entries) if entries.len() == 1 => {
                (entries[0].0.as_str(), Some(&entries[0].1))
            }
            other => {
                err.fail(other.unexpected("a variant name or an object with one key"));
                ("", None)
            }
        };
        Variant { name, body, err }
    }

    /// The text of an integer (`"0"` if it is not one): a fraction or an exponent is a
    /// float, which serde refuses too.
    fn integer(&self, err: &mut FirstError) -> &str {
        match self {
            Json::Number(n) if !n.contains(['.', 'e', 'E']) => n,
            other => {
                err.fail(other.unexpected("an integer"));
                "0"
            }
        }
    }
}

/// An object read as a struct's fields (or a struct variant's, named `within`).
pub struct Fields<'a> {
    entries: &'a [(String, Json)],
    within: &'a str,
    err: &'a mut FirstError,
}

impl<'a> Fields<'a> {
    /// A field that must be there (unless `T` is an `Option`).
    pub fn field<T: FromJson>(&mut self, name: &str) -> T {
        match self.entry(name) {
            Some(json) => self.err.read(json, &[name, self.within]),
            None => T::missing().unwrap_or_else(|| self.missing(name)),
        }
    }

    /// A field older files may lack (once `#[serde(default)]`): `T::default()` when absent.
    pub fn field_or_default<T: FromJson + Default>(&mut self, name: &str) -> T {
        match self.entry(name) {
            Some(json) => self.err.read(json, &[name, self.within]),
            None => T::default(),
        }
    }

    /// The value of `name`, if there; twice is an error, as with serde.
    fn entry(&mut self, name: &str) -> Option<&'a Json> {
        let mut found = self.entries.iter().filter(|(k, _)| k == name);
        let first = found.next().map(|(_, json)| json);
        if found.next().is_some() {
            self.fail(format!("duplicate field `{name}`"));
        }
        first
    }

    /// The error for an absent field, and a stand-in for it.
    fn missing<T: FromJson>(&mut self, name: &str) -> T {
        self.fail(format!("missing field `{name}`"));
        T::from_json(NULL, self.err)
    }

    /// An error about this object itself.
    #[cold]
    fn fail(&mut self, what: String) {
        self.err.fail_in(JsonError::shape(what), &[self.within]);
    }
}

/// One variant of an externally tagged enum: its name, and its body unless it is a unit.
pub struct Variant<'a> {
    pub name: &'a str,
    body: Option<&'a Json>,
    err: &'a mut FirstError,
}

impl<'a> Variant<'a> {
    /// A unit variant: the name alone (or `{"Name": null}`, which serde also reads).
    pub fn unit<T>(mut self, value: T) -> T {
        if let Some(body) = self.body.filter(|b| !matches!(b, Json::Null)) {
            self.fail(body.unexpected("null (a unit variant)"));
        }
        value
    }

    /// A newtype variant: `{"Name": value}`.
    pub fn newtype<T: FromJson>(mut self) -> T {
        let body = self.body();
        self.err.read(body, &[self.name])
    }

    /// A struct variant: `{"Name": {fields}}`.
    pub fn fields(mut self) -> Fields<'a> {
        let body = self.body();
        let was_clean = self.err.clean();
        let mut fields = body.fields(self.err);
        if was_clean {
            fields.err.place(&[self.name]);
        }
        fields.within = self.name;
        fields
    }

    /// A variant of an enum whose variants are all units, by name:
    /// `json.variant(err).one_of(&[("off", Off), …])`. The first stands in for an unknown one.
    pub fn one_of<T: Copy>(self, choices: &[(&str, T)]) -> T {
        match choices.iter().find(|c| c.0 == self.name) {
            Some(&(_, value)) => self.unit(value),
            None => self.unknown(choices[0].1),
        }
    }

    /// The error for a name the enum does not have; `stand_in` is read instead.
    pub fn unknown<T>(self, stand_in: T) -> T {
        let what = format!("unknown variant `{}`", self.name);
        self.err.fail(JsonError::shape(what));
        stand_in
    }

    /// The body of a variant that needs one (`null` stands in for a missing one).
    fn body(&mut self) -> &'a Json {
        self.body.unwrap_or_else(|| {
            let what = "expected a value, not a unit variant".to_owned();
            self.fail(JsonError::shape(what));
            NULL
        })
    }

    #[cold]
    fn fail(&mut self, e: JsonError) {
        self.err.fail_in(e, &[self.name]);
    }
}

impl FromJson for bool {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        match json {
            Json::Bool(b) => *b,
            other => {
                err.fail(other.unexpected("true or false"));
                false
            }
        }
    }
}

impl FromJson for String {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        match json {
            Json::String(s) => s.clone(),
            other => {
                err.fail(other.unexpected("a string"));
                String::new()
            }
        }
    }
}

/// `Ok(())` is written `{"Ok": null}`.
impl FromJson for () {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        if !matches!(json, Json::Null) {
            err.fail(json.unexpected("null"));
        }
    }
}

/// An integer from its exact text (never through f64); 0 stands in for a bad one.
fn integer<T: std::str::FromStr + Default>(json: &Json, err: &mut FirstError, ty: &str) -> T {
    let text = json.integer(err);
    text.parse().unwrap_or_else(|_| {
        err.fail(JsonError::shape(format!("{text} is out of range for {ty}")));
        T::default()
    })
}

impl FromJson for u64 {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        integer(json, err, "u64")
    }
}

impl FromJson for i64 {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        integer(json, err, "i64")
    }
}

impl FromJson for usize {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        integer(json, err, "usize")
    }
}

/// `null` is `None`. (So `Some(None)` of an `Option<Option<_>>`, which serde also writes
/// as `null`, reads back as `None`, as with serde.)
impl<T: FromJson> FromJson for Option<T> {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        match json {
            Json::Null => None,
            json => Some(T::from_json(json, err)),
        }
    }

    fn missing() -> Option<Self> {
        Some(None)
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        let Json::Array(items) = json else {
            err.fail(json.unexpected("an array"));
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let was_clean = err.clean();
            out.push(T::from_json(item, err));
            if was_clean && !err.clean() {
                err.place(&[&format!("[{i}]")]);
            }
        }
        out
    }
}

impl<T: FromJson, E: FromJson> FromJson for Result<T, E> {
    fn from_json(json: &Json, err: &mut FirstError) -> Self {
        let v = json.variant(err);
        match v.name {
            "Ok" => Ok(v.newtype()),
            "Err" => Err(v.newtype()),
            _ => Err(v.unknown(E::from_json(NULL, &mut FirstError(None)))),
        }
    }
}
