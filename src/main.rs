fn main() -> std::process::ExitCode {
    git_hand::cli::main()
}
