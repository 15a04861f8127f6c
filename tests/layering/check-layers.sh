#!/bin/bash
# The layering of the source tree, as docs/architecture.md ("Layers") states it: that table is
# read here, so the rule and its statement are one. Every #include "..." and #include <...> of a
# C/C++ file under shared/, client/ and plugin/ that names a file of the project must name a file
# of its own folder or of a folder its layer may use. Fails, naming the file, the line and the
# rule, when a folder includes a layer above it, or when a file is in a folder the table does not
# name (a new folder gets its row first).
#
# An include is resolved as the compiler does: "..." relative to the including file, then through
# the project's -I paths (shared/, shared/pmix/, client/include/, the top level); <...> through the
# -I paths only (so <pmix_server.h> is client/include/pmix_server.h). Names that resolve to no
# file of the project (the system's and libraries' headers) are not checked.
set -uo pipefail
top=$(cd "${srcdir:-$(dirname "$0")/../..}" && pwd)
[ -d "$top/shared" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2

# folder | the folders it may include from, besides its own: the rows of the table under
# "## Layers" (| folder | may include | what it is |; "nothing", or folders separated by commas).
doc=docs/architecture.md
rules=$(awk '/^## Layers/ { on = 1; next } on && /^## / { exit } on && /^\|/ { print }' "$doc" 2>/dev/null |
    awk -F'|' '{
        f = $2; a = $3; gsub(/[` \t]/, "", f); gsub(/`/, "", a); gsub(/,/, " ", a)
        if (f == "folder" || f ~ /^-+$/ || f == "") next
        if (a ~ /^[ \t]*nothing[ \t]*$/) a = ""
        print f " | " a
    }')
if [ -z "$rules" ]; then
    echo "layering: no layer table under \"## Layers\" in $doc"
    exit 2
fi

files=$(find shared client plugin -type f \( -name '*.h' -o -name '*.cc' -o -name '*.c' -o -name '*.inc' \) ! -name Makefile.inc | sort)
# One awk pass: the rules, the list of files (to resolve includes as the compiler would), then
# every include line (grep -n output: file:line:text).
{
    echo "$rules" | sed 's/^/R /'
    echo "$files" | sed 's/^/F /'
    # shellcheck disable=SC2086
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' $files | sed 's/^/I /'
} | awk '
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
function norm(p,   n, parts, out, i, k) {  # collapse "." and ".." segments
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "" || parts[i] == ".") continue
        if (parts[i] == "..") { if (k > 0) k--; continue }
        out[++k] = parts[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
}
function folder_of(p,   f, best) {
    best = ""
    for (f in allowed) if (index(p, f "/") == 1 && length(f) > length(best)) best = f
    return best
}
$1 == "R" {
    line = substr($0, 3); if (trim(line) == "") next
    split(line, kv, "|"); f = trim(kv[1]); allowed[f] = f " " trim(kv[2]); next
}
$1 == "F" {
    exists[$2] = 1
    if (folder_of($2) == "") { printf "layering: %s is in a folder no row of docs/architecture.md (\"Layers\") names\n", $2; bad++ }
    next
}
$1 == "I" {
    rest = substr($0, 3)
    file = rest; sub(/:.*/, "", file)
    lineno = rest; sub(/^[^:]*:/, "", lineno); sub(/:.*/, "", lineno)
    text = rest; sub(/^[^:]*:[^:]*:/, "", text)
    angle = (text ~ /#[ \t]*include[ \t]*</)
    name = text
    if (angle) { sub(/^[^<]*</, "", name); sub(/>.*/, "", name) }
    else { sub(/^[^"]*"/, "", name); sub(/".*/, "", name) }
    dir = file; sub(/\/[^\/]*$/, "", dir)
    target = ""
    nb = split((angle ? "" : dir " ") "shared shared/pmix client/include .", bases, " ")
    for (b = 1; b <= nb; b++) { t = norm(bases[b] "/" name); if (t in exists) { target = t; break } }
    if (target == "") next
    checked++
    from = folder_of(file); to = folder_of(target)
    if (from == "" || to == "") next  # reported above
    ok = 0; n = split(allowed[from], al, " ")
    for (a = 1; a <= n; a++) if (to == al[a] || index(to, al[a] "/") == 1) ok = 1
    if (!ok) { printf "layering: %s:%s includes %s (%s may use: %s)\n", file, lineno, target, from, allowed[from]; bad++ }
}
END {
    printf "layering: %d includes checked, %d violations\n", checked, bad
    exit bad > 0
}'
