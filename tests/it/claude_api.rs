//! A stand-in for the Anthropic Messages API, so the real Claude Code CLI runs whole sessions in
//! the tests without a network: an HTTP/1.1 server on `127.0.0.1:0` (std only: a listener and a
//! thread per connection, requests read until the client closes) that answers
//! `POST /v1/messages` with one streamed (SSE) assistant turn taken from a script.
//!
//! Scripting is stateless, so parallel subagents and resumed sessions need no bookkeeping here: a
//! test gives a list of (marker, turns), and a request belongs to the script whose marker appears
//! in the text of its newest prompt (the `-p` prompt, a resumed session's new `-p` prompt, or a
//! subagent's `prompt`; tool results are not prompts). The turn it gets is the number of
//! assistant messages after that prompt. Past a script's end, or for a request no script claims
//! (a side request), it answers a text turn "done", which ends the session. Every request body is
//! kept, so a test reads what its Bash commands printed ([`ClaudeApi::bash_outputs`]).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One assistant turn the stand-in answers with.
#[derive(Debug, Clone)]
pub enum Turn {
    /// A `Bash` tool call running this command.
    Bash(String),
    /// An `Agent` tool call: a general-purpose subagent in a worktree of its own
    /// (`isolation: worktree`), whose first prompt is this text (its script's marker).
    Agent(String),
    /// Two `Agent` tool calls in one turn (blocks 0 and 1): Claude Code runs them at once.
    TwoAgents(String, String),
    /// A call of another tool (its name and input), such as [`Turn::remove_worktree`].
    Tool(String, Value),
    /// A text answer: the session's turn ends.
    Text(String),
}

impl Turn {
    /// Loads deferred tools (`ExitWorktree`, `EnterWorktree`): Claude Code offers them to the
    /// model only by name until a `ToolSearch` selects them, so a later turn may call them.
    pub fn load_tools(names: &[&str]) -> Self {
        let query = format!("select:{}", names.join(","));
        Turn::Tool(
            "ToolSearch".into(),
            json!({"query": query, "max_results": 5}),
        )
    }

    /// `ExitWorktree` removing the session's worktree: the one way a `-p` session runs its
    /// `WorktreeRemove` hook (measured with 2.1.328). Without `discard_changes` Claude Code
    /// refuses to remove a worktree a hook made, as it cannot tell its state. Needs
    /// [`Turn::load_tools`] first, and the tool allowed.
    pub fn remove_worktree() -> Self {
        Turn::Tool(
            "ExitWorktree".into(),
            json!({"action": "remove", "discard_changes": true}),
        )
    }
}

/// A script: the marker that claims a request, and the turns it is answered with in order.
pub type Script = (String, Vec<Turn>);

/// A request the stand-in answered: its body and the marker of the script that claimed it.
#[derive(Debug, Clone)]
pub struct Request {
    pub marker: Option<String>,
    pub body: Value,
}

/// The running stand-in; it serves until dropped.
pub struct ClaudeApi {
    port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
}

/// Tool-use ids are unique across the whole test run: Claude Code keys tool results by them.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl ClaudeApi {
    /// Starts the stand-in with `scripts`. Markers must be distinct and none a part of another.
    pub fn start(scripts: Vec<Script>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let scripts = Arc::new(scripts);
        let kept = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (scripts, kept) = (Arc::clone(&scripts), Arc::clone(&kept));
                std::thread::spawn(move || serve(stream, &scripts, &kept));
            }
        });
        Self { port, requests }
    }

    /// `ANTHROPIC_BASE_URL` for Claude Code.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request answered so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The Bash commands the requests claimed by `marker` carried results of, with what each
    /// printed (the tool result's text), in the order they ran, each once.
    pub fn bash_outputs(&self, marker: &str) -> Vec<(String, String)> {
        self.tool_outputs(marker, "Bash")
            .into_iter()
            .map(|(input, out)| (input["command"].as_str().unwrap_or_default().into(), out))
            .collect()
    }

    /// The calls of tool `name` the requests claimed by `marker` carried results of: each one's
    /// input and its result's text, in the order they ran, each once.
    pub fn tool_outputs(&self, marker: &str, name: &str) -> Vec<(Value, String)> {
        let mut seen = std::collections::HashSet::new();
        let mut out = vec![];
        for req in self.requests() {
            if req.marker.as_deref() != Some(marker) {
                continue;
            }
            let messages = req.body["messages"].as_array().cloned().unwrap_or_default();
            let mut calls = std::collections::HashMap::new();
            for block in messages.iter().flat_map(blocks) {
                match block["type"].as_str() {
                    Some("tool_use") if block["name"] == name => {
                        let id = block["id"].as_str().unwrap_or_default().to_string();
                        calls.insert(id, block["input"].clone());
                    }
                    Some("tool_result") => {
                        let id = block["tool_use_id"].as_str().unwrap_or_default();
                        if let Some(input) = calls.get(id)
                            && seen.insert(id.to_string())
                        {
                            out.push((input.clone(), result_text(&block["content"])));
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// What the command `command` of `marker`'s script printed (its first run).
    #[track_caller]
    pub fn output_of(&self, marker: &str, command: &str) -> String {
        self.bash_outputs(marker)
            .into_iter()
            .find(|(c, _)| c == command)
            .map(|(_, out)| out)
            .unwrap_or_else(|| {
                panic!(
                    "no result of `{command}` for {marker}; results: {:#?}",
                    self.bash_outputs(marker)
                )
            })
    }
}

/// A marker no other test's shares: `name` and a random suffix.
pub fn marker(name: &str) -> String {
    format!("{name}-{:016x}", random())
}

fn random() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(NEXT_ID.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// A message's content blocks (a plain string content is one text block).
fn blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(a) => a.clone(),
        _ => vec![],
    }
}

/// A tool result's text: a string, or its text blocks joined.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Answers the requests of one connection until the client closes it.
fn serve(stream: TcpStream, scripts: &[Script], kept: &Mutex<Vec<Request>>) {
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    while let Some((head, body)) = read_request(&mut reader) {
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let (kind, reply) = if head.starts_with("POST ") && path.starts_with("/v1/messages") {
            if path.contains("count_tokens") {
                ("application/json", json!({"input_tokens": 1}).to_string())
            } else {
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let (marker, turn) = claim(scripts, &body);
                let stream = body["stream"].as_bool().unwrap_or(false);
                kept.lock().unwrap().push(Request {
                    marker,
                    body: body.clone(),
                });
                let model = body["model"].as_str().unwrap_or("claude").to_string();
                answer(&model, &turn, stream)
            }
        } else {
            ("application/json", "{}".to_string())
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{reply}",
            reply.len()
        );
        if writer.write_all(response.as_bytes()).is_err() || writer.flush().is_err() {
            return;
        }
    }
}

/// One request's head (request line and headers) and body, or `None` at the connection's end.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            if head.is_empty() {
                continue;
            }
            break;
        }
        head.push_str(&line);
    }
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let mut body = vec![];
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(n) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((head, body))
}

/// The script that claims a request, and the turn it answers: the script whose marker is in
/// the newest prompt's text, at the count of assistant messages after that prompt.
fn claim(scripts: &[Script], body: &Value) -> (Option<String>, Turn) {
    let done = Turn::Text("done".into());
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    for (at, message) in messages.iter().enumerate().rev() {
        if message["role"] != "user" {
            continue;
        }
        let text: String = blocks(message)
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let Some((marker, turns)) = scripts.iter().find(|(m, _)| text.contains(m.as_str())) else {
            continue;
        };
        let answered = messages[at..]
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        let turn = turns.get(answered).cloned().unwrap_or(done);
        return (Some(marker.clone()), turn);
    }
    (None, done)
}

/// A unique tool-use id.
fn tool_use_id() -> String {
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    format!("toolu_{n:04}{:012x}", random() & 0xffff_ffff_ffff)
}

fn agent(prompt: &str) -> Value {
    json!({
        "type": "tool_use",
        "id": tool_use_id(),
        "name": "Agent",
        "input": {
            "description": "sub",
            "prompt": prompt,
            "subagent_type": "general-purpose",
            "isolation": "worktree",
            "run_in_background": false,
        },
    })
}

/// The content blocks of `turn`, and its stop reason.
fn content(turn: &Turn) -> (Vec<Value>, &'static str) {
    match turn {
        Turn::Bash(command) => (
            vec![json!({
                "type": "tool_use",
                "id": tool_use_id(),
                "name": "Bash",
                "input": {"command": command, "description": "run"},
            })],
            "tool_use",
        ),
        Turn::Agent(prompt) => (vec![agent(prompt)], "tool_use"),
        Turn::TwoAgents(a, b) => (vec![agent(a), agent(b)], "tool_use"),
        Turn::Tool(name, input) => (
            vec![json!({"type": "tool_use", "id": tool_use_id(), "name": name, "input": input})],
            "tool_use",
        ),
        Turn::Text(text) => (vec![json!({"type": "text", "text": text})], "end_turn"),
    }
}

/// The response to a messages request: an SSE stream of one assistant message (or, when the
/// client asked for no stream, the message as JSON).
fn answer(model: &str, turn: &Turn, stream: bool) -> (&'static str, String) {
    let (blocks, stop) = content(turn);
    let mut message = json!({
        "id": format!("msg_{:016x}", random()),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": null,
        "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    });
    if !stream {
        message["content"] = Value::Array(blocks);
        message["stop_reason"] = json!(stop);
        return ("application/json", message.to_string());
    }
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": message}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("tool_use") => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            ),
            _ => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 1}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let text = events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect();
    ("text/event-stream", text)
}
