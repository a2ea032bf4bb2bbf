//! The tokens of a Rust source file that can name a module: identifiers and the punctuation of
//! paths and blocks. Comments (doc comments included: an intra-doc link is no import), byte and
//! char literals and lifetimes are dropped; so is every item under `#[cfg(test)]`. String
//! literals are kept apart ([`strings`]): they name no module, but they are the words a user
//! reads (`tests/it/words_in_cli.rs`).

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Ident(String),
    /// `::`
    PathSep,
    /// Any other punctuation, one character (`{`, `}`, `,`, `;`, `*`, `#`, `$`, `<`, ...).
    Punct(char),
    /// A string literal (`"..."` or raw), its source text between the quotes (escapes and line
    /// continuations as written), and the line it starts on.
    Str {
        text: String,
        line: usize,
    },
}

/// The tokens of `text` that can name a module, with `#[cfg(test)]` items left out.
pub fn tokens(text: &str) -> Vec<Token> {
    without_test_items(raw_tokens(text))
        .into_iter()
        .filter(|t| !matches!(t, Token::Str { .. }))
        .collect()
}

/// The string literals of `text` outside `#[cfg(test)]` items: (line, source text).
pub fn strings(text: &str) -> Vec<(usize, String)> {
    without_test_items(raw_tokens(text))
        .into_iter()
        .filter_map(|t| match t {
            Token::Str { text, line } => Some((line, text)),
            _ => None,
        })
        .collect()
}

/// The child modules `text` declares only for tests (`#[cfg(test)] mod tests;`): their files are
/// test code, no node of the graph.
pub fn test_only_children(text: &str) -> Vec<String> {
    let tokens = raw_tokens(text);
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        if !is_cfg_test_at(&tokens, i) {
            continue;
        }
        let mut j = past_attributes(&tokens, i);
        if tokens.get(j) == Some(&Token::Ident("pub".into())) {
            j += 1;
            if tokens.get(j) == Some(&Token::Punct('(')) {
                j = past_balanced(&tokens, j, '(', ')');
            }
        }
        if let (Some(Token::Ident(kw)), Some(Token::Ident(name)), Some(Token::Punct(';'))) =
            (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
            && kw == "mod"
        {
            out.push(name.clone());
        }
    }
    out
}

fn raw_tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let newlines: Vec<usize> = (0..chars.len()).filter(|&i| chars[i] == '\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = skip_block_comment(&chars, i);
        } else if let Some(end) = raw_string_end(&chars, i) {
            out.push(string_token(&chars, i, end, &newlines));
            i = end;
        } else if c == '"' {
            let end = skip_quoted(&chars, i + 1, '"');
            out.push(string_token(&chars, i, end, &newlines));
            i = end;
        } else if c == 'b' && next == Some('"') {
            i = skip_quoted(&chars, i + 2, '"');
        } else if c == 'b' && next == Some('\'') {
            i = skip_quoted(&chars, i + 2, '\'');
        } else if c == '\'' {
            i = skip_char_or_lifetime(&chars, i);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// The string literal from `start` to `end` (its quotes and any `r#` included); `newlines` are
/// the positions of the file's line ends.
fn string_token(chars: &[char], start: usize, end: usize, newlines: &[usize]) -> Token {
    let literal: String = chars[start..end].iter().collect();
    let body = literal.trim_start_matches('r').trim_matches('#');
    let body = body.strip_prefix('"').unwrap_or(body);
    let body = body.strip_suffix('"').unwrap_or(body);
    Token::Str {
        text: body.to_string(),
        line: 1 + newlines.partition_point(|&p| p < start),
    }
}

/// Past a `/* ... */` starting at `i` (they nest in Rust).
fn skip_block_comment(chars: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        match (chars[i], chars.get(i + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    i
}

/// Past `r"..."`, `r#"..."#`, `br"..."` and the like when one starts at `i`.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    // An identifier ending in r (`for"`) is not a raw string: only at a token's start.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// Past the closing `quote` of a literal whose body starts at `i` (backslash escapes).
fn skip_quoted(chars: &[char], mut i: usize, quote: char) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// Past a char literal (`'a'`, `'\n'`, `'\u{7f}'`) or a lifetime (`'a`, `'static`) at `i`.
fn skip_char_or_lifetime(chars: &[char], i: usize) -> usize {
    match chars.get(i + 1) {
        Some('\\') => skip_quoted(chars, i + 1, '\''),
        Some(_) if chars.get(i + 2) == Some(&'\'') => i + 3,
        _ => {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            j
        }
    }
}

/// `tokens` without the items that follow `#[cfg(test)]` (the attribute, any more attributes,
/// then the item up to its `;` or through its `{ ... }` block).
fn without_test_items(tokens: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test_at(&tokens, i) {
            i = skip_item(&tokens, i);
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

fn is_cfg_test_at(tokens: &[Token], i: usize) -> bool {
    let want = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".into()),
        Token::Punct('('),
        Token::Ident("test".into()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    tokens.get(i..i + want.len()) == Some(&want[..])
}

/// Past the attributes (`#[...]`, one or more) starting at `i`.
fn past_attributes(tokens: &[Token], mut i: usize) -> usize {
    while tokens.get(i) == Some(&Token::Punct('#')) {
        i = past_balanced(tokens, i + 1, '[', ']');
    }
    i
}

/// Past the attributes starting at `i` and the item they are on.
fn skip_item(tokens: &[Token], i: usize) -> usize {
    let mut i = past_attributes(tokens, i);
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct(';') => return i + 1,
            Token::Punct('{') => return past_balanced(tokens, i, '{', '}'),
            _ => i += 1,
        }
    }
    i
}

/// Past the bracket pair opening at `i` (`open` is expected there).
fn past_balanced(tokens: &[Token], mut i: usize, open: char, close: char) -> usize {
    let mut depth = 0;
    while i < tokens.len() {
        if tokens[i] == Token::Punct(open) {
            depth += 1;
        } else if tokens[i] == Token::Punct(close) {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    i
}

#[test]
fn literals_comments_and_test_items_name_nothing() {
    let text = r##"
        use crate::a::b; // crate::in_comment
        /* crate::block /* nested */ crate::still */
        let s = "crate::in_string \" crate::escaped";
        let r = r#"crate::raw "quoted" "#;
        let c = '"'; let l: &'static str = "x"; let q = '\'';
        #[cfg(test)]
        mod tests { use crate::only_tests; }
        #[cfg(test)]
        use crate::test_import;
        #[cfg(not(test))]
        use crate::kept;
    "##;
    let idents: Vec<String> = tokens(text)
        .into_iter()
        .filter_map(|t| match t {
            Token::Ident(s) => Some(s),
            _ => None,
        })
        .collect();
    let text = idents.join(" ");
    assert!(
        text.starts_with("use crate a b let s let r let c let l str let q"),
        "{text}"
    );
    assert!(text.ends_with("cfg not test use crate kept"), "{text}");
    for hidden in [
        "in_comment",
        "block",
        "in_string",
        "raw",
        "only_tests",
        "test_import",
    ] {
        assert!(!idents.iter().any(|i| i == hidden), "{hidden} in {text}");
    }
    let declared = "mod a;\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\npub(crate) mod fixtures;\n";
    assert_eq!(test_only_children(declared), ["tests", "fixtures"]);
}
