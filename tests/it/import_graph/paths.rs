//! The module paths a file names by `crate::...` or `super::...`, in `use` and in code, grouped
//! imports (`crate::{a, b::{c, d}}`) expanded, each made absolute from where it is written (the
//! file's module, or an inline `mod name { ... }` in it).

use super::lex::Token;

/// Every absolute path (segments below the crate root) named in a file of module `module`.
pub fn named(tokens: &[Token], module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Inline modules open here: (the brace depth inside them, their name).
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Token::Ident(kw) if kw == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Punct('{'))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    inline.push((depth + 1, name.clone()));
                }
            }
            Token::Ident(start)
                if (start == "crate" || start == "super") && starts_a_path(tokens, i) =>
            {
                let here: Vec<String> = module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(_, n)| n.clone()))
                    .collect();
                let (base, next) = base_of(tokens, i, &here);
                let mut tails = Vec::new();
                let end = tail(tokens, next, &mut Vec::new(), &mut tails);
                for t in tails {
                    out.push(base.iter().cloned().chain(t).collect());
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `crate` or `super` at `i` begins a path: followed by `::`, and not itself after `::` or `$`.
fn starts_a_path(tokens: &[Token], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| tokens.get(j));
    tokens.get(i + 1) == Some(&Token::PathSep)
        && !matches!(before, Some(Token::PathSep) | Some(Token::Punct('$')))
}

/// The module the path at `i` starts from (`crate`: the root; each `super`: one up from `here`)
/// and the index of the first token after that start and its `::`.
fn base_of(tokens: &[Token], mut i: usize, here: &[String]) -> (Vec<String>, usize) {
    if tokens[i] == Token::Ident("crate".into()) {
        return (Vec::new(), i + 2);
    }
    let mut up = 0;
    while tokens.get(i) == Some(&Token::Ident("super".into()))
        && tokens.get(i + 1) == Some(&Token::PathSep)
    {
        up += 1;
        i += 2;
    }
    (here[..here.len().saturating_sub(up)].to_vec(), i)
}

/// Reads the rest of a path from `i` (after a `::`): a name, possibly `::` and more, or a group
/// `{ ... }` of such tails, or `*`. Each complete tail, prefixed by `prefix`, goes to `out`.
/// Returns the index after the path.
fn tail(tokens: &[Token], i: usize, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    match tokens.get(i) {
        Some(Token::Ident(name)) if name == "self" => {
            out.push(prefix.clone());
            i + 1
        }
        Some(Token::Ident(name)) => {
            prefix.push(name.clone());
            let end = if tokens.get(i + 1) == Some(&Token::PathSep) {
                tail(tokens, i + 2, prefix, out)
            } else {
                out.push(prefix.clone());
                i + 1
            };
            prefix.pop();
            end
        }
        Some(Token::Punct('{')) => {
            let mut j = i + 1;
            loop {
                match tokens.get(j) {
                    None => return j,
                    Some(Token::Punct('}')) => return j + 1,
                    Some(Token::Punct(',')) => j += 1,
                    Some(Token::Ident(kw)) if kw == "as" => j += 2,
                    Some(_) => {
                        let next = tail(tokens, j, prefix, out);
                        j = next.max(j + 1);
                    }
                }
            }
        }
        // `*`, `<` (turbofish) and anything else end the path where it stands.
        _ => {
            out.push(prefix.clone());
            i
        }
    }
}

#[test]
fn grouped_relative_and_inline_paths_are_made_absolute() {
    let text = r#"
        use crate::{a, b::{c, d as e}, f::self};
        use super::g::*;
        fn x() { crate::h::i::j(); let _ = super::super::k; }
        mod inner { use super::l; }
        macro_rules! m { () => { $crate::word::name() } }
    "#;
    let tokens = super::lex::tokens(text);
    let here = ["ops".to_string(), "doctor".to_string()];
    let got: Vec<String> = named(&tokens, &here).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        [
            "a",
            "b::c",
            "b::d",
            "f",
            "ops::g",
            "h::i::j",
            "k",
            "ops::doctor::l"
        ]
    );
}
