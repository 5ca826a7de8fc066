#!/usr/bin/env bash
# The commands in the docs run (docs/user-guide.md, "Examples that run"). Usage:
#
#   scripts/doc-commands.sh run    LLMSIM_BINARY [SOURCE_DIR]   # every command of every ```sh block
#   scripts/doc-commands.sh check  LLMSIM_BINARY [SOURCE_DIR]   # shown outputs equal the binary's
#   scripts/doc-commands.sh update LLMSIM_BINARY [SOURCE_DIR]   # rewrite the shown outputs and generated docs
#   scripts/doc-commands.sh generated LLMSIM_BINARY [SOURCE_DIR] # generated docs equal the binary's output
#
# run: each line of a ```sh block in README.md and docs/*.md (a trailing backslash continues it) runs
# in a scratch folder that links the repository's folders (so scenarios/x.json resolves and written
# files land in the scratch folder), with the built binary first on PATH; a command that exits non-zero
# fails the check, and so does a text output of README.md's wider than 80 columns (a terminal's width;
# --json, --csv and --wide outputs aside). `python3` lines run the same way with the Python module built
# beside the binary (BUILD/python, docs/python.md) on PYTHONPATH. Other lines must match an entry of
# SETUP below (installing, building, GPU and cluster steps): they are listed as skipped, never silently;
# any other line fails.
#
# check/update: an output block is an HTML comment naming a command followed by a ```text block:
#     <!-- output: llmsim chinchilla --compute 5.76e23 -->
#     ```text
#     ...what the command prints...
#     ```
# `update` reruns each command and rewrites its block; `check` fails when a block differs.
#
# generated: whole files that are a command's output (GENERATED below), such as
# docs/scenario-reference.md from `llmsim scenario-reference`; fails when the committed file differs
# from the binary's output. `update` rewrites them too.
set -u -o pipefail

mode=${1:?mode: run, check or update}
bin=$(realpath "${2:?path of the built llmsim}")
src=$(realpath "${3:-$(dirname "$0")/..}")

# Set-up lines shown in the docs but not run here: prefix -> why.
SETUP_PREFIXES=("./scripts/deps.sh" "make" "cmake" "ctest" "bash calibrate/probe/build.sh" "./llmsim-probe"
                "sbatch" "parallel" "build/bench/" "export PYTHONPATH=")
SETUP_WHY=("installs packages" "builds" "builds" "runs the test suite (this check is part of it)" "needs nvcc"
           "needs a GPU" "needs a Slurm cluster" "needs GNU parallel" "a benchmark (minutes; docs/runs.md)"
           "python3 lines run with the built module on PYTHONPATH")

# Generated docs: file -> the command whose output it is.
GENERATED_FILES=("docs/scenario-reference.md")
GENERATED_COMMANDS=("llmsim scenario-reference")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "$src"/*; do ln -s "$entry" "$work/$(basename "$entry")"; done
mkdir -p "$work/bin"
ln -s "$bin" "$work/bin/llmsim"
export PATH="$work/bin:$PATH"

docs=("$src/README.md" "$src"/docs/*.md)

# Prints "file:line<TAB>command" for each command of each ```sh block.
sh_commands() {
    awk '
        FNR == 1 { inblock = 0; cmd = "" }
        /^```sh[ \t]*$/ { inblock = 1; next }
        /^```/ { inblock = 0; next }
        inblock {
            line = $0
            if (cmd == "") start = FNR
            if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cmd = cmd line " "; next }
            cmd = cmd line
            sub(/^[ \t]+/, "", cmd)
            if (cmd != "" && cmd !~ /^#/) print FILENAME ":" start "\t" cmd
            cmd = ""
        }' "${docs[@]}"
}

run_all() {
    local failed=0 ran=0 skipped=0 where cmd why i
    while IFS=$'\t' read -r where cmd; do
        where=${where#"$src"/}
        # A trailing "  # comment" is a remark for the reader.
        cmd=$(sed -E 's/[[:space:]]{2,}#[[:space:]].*$//' <<<"$cmd")
        if [[ $cmd == llmsim\ * || $cmd == python3\ * ]]; then
            if ! (cd "$work" && PYTHONPATH="$(dirname "$bin")/python" timeout 600 bash -c "$cmd" </dev/null \
                >"$work/.out" 2>&1); then
                echo "FAIL $where: $cmd"
                sed 's/^/    /' "$work/.out" | tail -20
                failed=$((failed + 1))
            elif [[ $where == README.md:* && $cmd == llmsim\ * ]] && ! grep -Eq -- '--(json|wide|csv)' <<<"$cmd" &&
                ! grep -q '^[[{]' "$work/.out"; then
                # The README's text output fits a terminal of 80 columns (tables wrap; --wide is the way out).
                local width
                width=$(LC_ALL=C.UTF-8 wc -L <"$work/.out")
                if [[ $width -gt 80 ]]; then
                    echo "FAIL $where: output $width columns wide (at most 80): $cmd"
                    LC_ALL=C.UTF-8 awk 'length($0) > 80' "$work/.out" | head -5 | sed 's/^/    /'
                    failed=$((failed + 1))
                fi
            fi
            ran=$((ran + 1))
            continue
        fi
        why=""
        for i in "${!SETUP_PREFIXES[@]}"; do
            if [[ $cmd == "${SETUP_PREFIXES[$i]}"* ]]; then why=${SETUP_WHY[$i]}; fi
        done
        if [[ -n $why ]]; then
            echo "skipped $where: $cmd ($why)"
            skipped=$((skipped + 1))
        else
            echo "FAIL $where: not an llmsim command and not a listed set-up step: $cmd"
            failed=$((failed + 1))
        fi
    done < <(sh_commands)
    echo "doc commands: $ran run, $skipped set-up lines skipped, $failed failed"
    # Every listed line was seen (a command reading stdin once swallowed the rest of the list).
    local listed
    listed=$(sh_commands | wc -l)
    if [[ $((ran + skipped + failed)) -ne $listed ]]; then
        echo "FAIL: $listed command lines listed, $((ran + skipped + failed)) seen"
        failed=$((failed + 1))
    fi
    [[ $failed -eq 0 && $ran -gt 0 ]]
}

# Rewrites (update) or compares (check) every output block of one file.
outputs_of() {
    local file=$1 mode=$2 tmp
    tmp=$(mktemp)
    local state=text cmd="" n=0 diff=0
    while IFS= read -r line || [[ -n $line ]]; do
        case $state in
            text)
                printf '%s\n' "$line" >>"$tmp"
                if [[ $line =~ ^\<\!--\ output:\ (.*)\ --\>$ ]]; then
                    cmd=${BASH_REMATCH[1]}
                    state=want_fence
                fi
                ;;
            want_fence)
                printf '%s\n' "$line" >>"$tmp"
                [[ $line == '```text' ]] && state=old_block || state=text
                ;;
            old_block)
                if [[ $line == '```' ]]; then
                    (cd "$work" && COLUMNS=100 bash -c "$cmd" </dev/null 2>&1) >>"$tmp"
                    printf '```\n' >>"$tmp"
                    n=$((n + 1))
                    state=text
                fi
                ;;
        esac
    done <"$file"
    if ! cmp -s "$file" "$tmp"; then
        if [[ $mode == update ]]; then
            cp "$tmp" "$file"
            echo "updated ${file#"$src"/}"
        else
            echo "FAIL ${file#"$src"/}: shown output differs from the binary's (scripts/doc-commands.sh update):"
            diff -u "$file" "$tmp" | head -40
            diff=1
        fi
    fi
    rm -f "$tmp"
    return $diff
}

# Compares (generated) or rewrites (update) every generated doc.
generated_docs() {
    local mode=$1 status=0 i file tmp
    for i in "${!GENERATED_FILES[@]}"; do
        file="$src/${GENERATED_FILES[$i]}"
        tmp=$(mktemp)
        (cd "$work" && bash -c "${GENERATED_COMMANDS[$i]}" </dev/null) >"$tmp" || status=1
        if ! cmp -s "$file" "$tmp"; then
            if [[ $mode == update ]]; then
                cp "$tmp" "$file"
                echo "updated ${GENERATED_FILES[$i]}"
            else
                echo "FAIL ${GENERATED_FILES[$i]}: differs from \`${GENERATED_COMMANDS[$i]}\` (scripts/doc-commands.sh update):"
                diff -u "$file" "$tmp" | head -40
                status=1
            fi
        fi
        rm -f "$tmp"
    done
    return $status
}

case $mode in
    run) run_all ;;
    generated) generated_docs check ;;
    check | update)
        status=0
        for f in "${docs[@]}"; do outputs_of "$f" "$mode" || status=1; done
        if [[ $mode == update ]]; then generated_docs update || status=1; fi
        exit $status
        ;;
    *)
        echo "unknown mode $mode: expected run, check, update or generated" >&2
        exit 2
        ;;
esac
