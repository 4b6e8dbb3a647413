//! Splits nGQL text into tokens that remember their byte span, for `near` error messages.

use quiver_common::{QError, QResult};

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A bare word; keywords are recognized case-insensitively by the parser.
    Ident(String),
    /// A backquoted name: never a keyword.
    Quoted(String),
    /// Integer literal, kept wide so `-9223372036854775808` can be formed by the parser.
    Int(i128),
    Float(f64),
    Str(String),
    /// `$name`
    Var(String),
    /// `$-`, `$^`, `$$`
    InputRef,
    SrcRef,
    DstRef,
    Sym(&'static str),
    Eof,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// The symbol `rest` starts with, the longest first: `->`, `<-`, `--`, `==`, `!=`, `<>`, `<=`, `>=`, `=~`, `&&`,
/// `||`, `..`, and one of `()[]{},;:.|=<>+-*/%!@?`. Decided by the first byte (a scan of the list per symbol was a
/// tenth of lexing).
fn symbol(rest: &[u8]) -> Option<&'static str> {
    let next = rest.get(1).copied().unwrap_or(0);
    Some(match (rest[0], next) {
        (b'-', b'>') => "->",
        (b'-', b'-') => "--",
        (b'-', _) => "-",
        (b'<', b'-') => "<-",
        (b'<', b'>') => "<>",
        (b'<', b'=') => "<=",
        (b'<', _) => "<",
        (b'>', b'=') => ">=",
        (b'>', _) => ">",
        (b'=', b'=') => "==",
        (b'=', b'~') => "=~",
        (b'=', _) => "=",
        (b'!', b'=') => "!=",
        (b'!', _) => "!",
        (b'&', b'&') => "&&",
        (b'|', b'|') => "||",
        (b'|', _) => "|",
        (b'.', b'.') => "..",
        (b'.', _) => ".",
        (b'(', _) => "(",
        (b')', _) => ")",
        (b'[', _) => "[",
        (b']', _) => "]",
        (b'{', _) => "{",
        (b'}', _) => "}",
        (b',', _) => ",",
        (b';', _) => ";",
        (b':', _) => ":",
        (b'+', _) => "+",
        (b'*', _) => "*",
        (b'/', _) => "/",
        (b'%', _) => "%",
        (b'@', _) => "@",
        (b'?', _) => "?",
        _ => return None,
    })
}

pub fn lex(src: &str) -> QResult<Vec<Token>> {
    let bytes = src.as_bytes();
    // About one token per four bytes of a typical statement.
    let mut out = Vec::with_capacity(src.len() / 4 + 1);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // A no-break space (U+00A0, as pasted from a web page) is a blank too, as NebulaGraph's scanner takes it.
        if c == 0xC2 && bytes.get(i + 1) == Some(&0xA0) {
            i += 2;
            continue;
        }
        // Comments: `#` and `//` to end of line, `/* ... */`. Since NebulaGraph 2.0 `--` is no comment: it is an
        // edge in a pattern, `(a)--(b)`.
        if c == b'#' || (c == b'/' && bytes.get(i + 1) == Some(&b'/')) {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            match src[i + 2..].find("*/") {
                Some(p) => i = i + 2 + p + 2,
                None => return Err(QError::syntax("unterminated comment")),
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let nbsp = |i: usize| bytes[i] == 0xC2 && bytes.get(i + 1) == Some(&0xA0);
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
                && !nbsp(i)
            {
                i += 1;
            }
            out.push(Token { tok: Tok::Ident(src[start..i].to_string()), start, end: i });
            continue;
        }
        if c.is_ascii_digit()
            || (c == b'.' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit()) && !prev_is_value(&out))
        {
            let tok = lex_number(src, &mut i)?;
            out.push(Token { tok, start, end: i });
            continue;
        }
        if c == b'"' || c == b'\'' {
            let s = lex_string(src, &mut i, c)?;
            out.push(Token { tok: Tok::Str(s), start, end: i });
            continue;
        }
        if c == b'`' {
            i += 1;
            let mut name = String::new();
            loop {
                match bytes.get(i) {
                    None => return Err(QError::syntax(format!("unterminated quoted name near `{}'", &src[start..]))),
                    Some(b'`') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if matches!(bytes.get(i + 1), Some(b'`') | Some(b'\\')) => {
                        name.push(bytes[i + 1] as char);
                        i += 2;
                    }
                    // NebulaGraph's scanner: a dot accesses a property, so no name holds one.
                    Some(b'.') => {
                        return Err(QError::syntax(format!(
                            "Don't allow DOT in label: near `{}'",
                            near_text(src, i, i + 1)
                        )));
                    }
                    Some(_) => {
                        let ch = src[i..].chars().next().expect("in bounds");
                        name.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            out.push(Token { tok: Tok::Quoted(name), start, end: i });
            continue;
        }
        if c == b'$' {
            let tok = match bytes.get(i + 1) {
                Some(b'-') => {
                    i += 2;
                    Tok::InputRef
                }
                Some(b'^') => {
                    i += 2;
                    Tok::SrcRef
                }
                Some(b'$') => {
                    i += 2;
                    Tok::DstRef
                }
                Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
                    i += 1;
                    let s = i;
                    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                        i += 1;
                    }
                    Tok::Var(src[s..i].to_string())
                }
                _ => return Err(near_error(src, start, start + 1)),
            };
            out.push(Token { tok, start, end: i });
            continue;
        }
        let rest = &bytes[i..];
        match symbol(rest) {
            Some(sym) => {
                i += sym.len();
                out.push(Token { tok: Tok::Sym(sym), start, end: i });
            }
            None => {
                return Err(near_error(src, start, start + src[start..].chars().next().map_or(1, |c| c.len_utf8())))
            }
        }
    }
    out.push(Token { tok: Tok::Eof, start: src.len(), end: src.len() });
    Ok(out)
}

/// After a value a `.` is an attribute access, not the start of a number like `.5`.
fn prev_is_value(out: &[Token]) -> bool {
    matches!(
        out.last().map(|t| &t.tok),
        Some(
            Tok::Ident(_)
                | Tok::Quoted(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::Var(_)
                | Tok::Sym(")")
                | Tok::Sym("]")
        )
    )
}

fn lex_number(src: &str, i: &mut usize) -> QResult<Tok> {
    let bytes = src.as_bytes();
    let start = *i;
    if bytes[start] == b'0' && matches!(bytes.get(start + 1), Some(b'x') | Some(b'X')) {
        *i += 2;
        while *i < bytes.len() && bytes[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        return i128::from_str_radix(&src[start + 2..*i], 16)
            .ok()
            .filter(|v| *v <= u64::MAX as i128)
            .map(Tok::Int)
            .ok_or_else(|| QError::syntax(format!("Out of range: near `{}'", &src[start..*i])));
    }
    while *i < bytes.len() && bytes[*i].is_ascii_digit() {
        *i += 1;
    }
    let mut is_float = false;
    // `1..3` is a range in a slice, not a float.
    if *i < bytes.len() && bytes[*i] == b'.' && bytes.get(*i + 1) != Some(&b'.') {
        is_float = true;
        *i += 1;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
    }
    if *i < bytes.len() && (bytes[*i] == b'e' || bytes[*i] == b'E') {
        let save = *i;
        *i += 1;
        if *i < bytes.len() && (bytes[*i] == b'+' || bytes[*i] == b'-') {
            *i += 1;
        }
        if *i < bytes.len() && bytes[*i].is_ascii_digit() {
            is_float = true;
            while *i < bytes.len() && bytes[*i].is_ascii_digit() {
                *i += 1;
            }
        } else {
            *i = save;
        }
    }
    if *i < bytes.len() && (bytes[*i].is_ascii_alphabetic() || bytes[*i] == b'_') {
        // `123abc` is not a number followed by a name.
        let mut j = *i;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
            j += 1;
        }
        return Err(near_error(src, start, j));
    }
    let text = &src[start..*i];
    if is_float {
        text.parse::<f64>().map(Tok::Float).map_err(|_| QError::syntax(format!("Out of range: near `{text}'")))
    } else if text.len() > 1 && text.starts_with('0') {
        i128::from_str_radix(&text[1..], 8).map(Tok::Int).map_err(|_| near_error(src, start, *i))
    } else {
        match text.parse::<i128>() {
            Ok(v) if v <= i64::MAX as i128 + 1 => Ok(Tok::Int(v)),
            _ => Err(QError::syntax(format!("Out of range: near `{text}'"))),
        }
    }
}

fn lex_string(src: &str, i: &mut usize, quote: u8) -> QResult<String> {
    let start = *i;
    *i += 1;
    let mut s = String::new();
    let bytes = src.as_bytes();
    loop {
        let Some(&b) = bytes.get(*i) else {
            return Err(QError::syntax(format!("unterminated string near `{}'", truncate(&src[start..], 80))));
        };
        if b == quote {
            *i += 1;
            return Ok(s);
        }
        if b == b'\\' {
            let Some(&e) = bytes.get(*i + 1) else {
                return continue_err(src, start);
            };
            // NebulaGraph's scanner (`scanner.lex`): `\uHHHH` or `\xHHHH` a code point, one to three octal digits a
            // byte (a run of more digits, or an 8 or 9, is refused), `\n \t \r \b \f`, and any other character
            // stands for itself (`\\w` is `\w`, `\w` is `w`).
            let hex4 = bytes.get(*i + 2..*i + 6).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            if let (b'u' | b'U' | b'x' | b'X', Some(h)) = (e, hex4) {
                let code = u32::from_str_radix(std::str::from_utf8(h).expect("hex digits"), 16).expect("hex");
                let Some(c) = char::from_u32(code) else { return continue_err(src, start) };
                s.push(c);
                *i += 6;
                continue;
            }
            if e.is_ascii_digit() {
                let digits = bytes[*i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
                let octal = &bytes[*i + 1..*i + 1 + digits];
                if digits > 3 || octal.iter().any(|b| *b > b'7') {
                    return Err(QError::syntax(format!("bad escape in string near `{}'", truncate(&src[start..], 80))));
                }
                let val = octal.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'));
                if val > 0xFF {
                    return Err(QError::syntax(format!("bad escape in string near `{}'", truncate(&src[start..], 80))));
                }
                s.push(char::from(val as u8));
                *i += 1 + digits;
                continue;
            }
            *i += 2;
            match e {
                b'n' => s.push('\n'),
                b't' => s.push('\t'),
                b'r' => s.push('\r'),
                b'b' => s.push('\u{8}'),
                b'f' => s.push('\u{c}'),
                _ => {
                    // The character after the backslash, whole (it may take more than one byte).
                    *i -= 1;
                    let ch = src[*i..].chars().next().expect("in bounds");
                    s.push(ch);
                    *i += ch.len_utf8();
                }
            }
            continue;
        }
        let ch = src[*i..].chars().next().expect("in bounds");
        s.push(ch);
        *i += ch.len_utf8();
    }
}

fn continue_err<T>(src: &str, start: usize) -> QResult<T> {
    Err(QError::syntax(format!("unterminated string near `{}'", truncate(&src[start..], 80))))
}

pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// NebulaGraph's message for an unexpected token: the token's text if it is longer than one character
/// (at most 80 bytes), otherwise the 8 bytes starting at it; at the end of input, `at end of input`.
pub fn near_error(src: &str, start: usize, end: usize) -> QError {
    if start >= src.len() {
        return QError::syntax("syntax error at end of input");
    }
    QError::syntax(format!("syntax error near `{}'", near_text(src, start, end)))
}

/// The text NebulaGraph's parser quotes after "near": the token, or for a one-character token up to 8 characters
/// from it.
pub fn near_text(src: &str, start: usize, end: usize) -> String {
    let start = start.min(src.len());
    if end > start + 1 {
        truncate(&src[start..end.min(src.len())], 80).to_string()
    } else {
        truncate(&src[start..], 8).to_string()
    }
}
