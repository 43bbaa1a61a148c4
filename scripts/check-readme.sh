#!/bin/sh
# The uring-info reports that README.md and docs/*.md quote are the
# program's own. Each ```text block whose first line is
#   $ build/bin/uring-info
# or
#   $ build/helpers/no-uring ERRNO build/bin/uring-info
# is compared with what that command prints here, line by line, after
# machine-specific fields are normalised on both sides: the kernel release
# (all but major.minor), uid and euid, RLIMIT_MEMLOCK's numbers and the
# number of seccomp filters. A quote may leave lines out with a line `...`
# (any number of lines) or `[... N more lines, all yes ...]` (exactly N, each
# answering yes). Every block must name the kernel release it was taken on;
# on a machine whose kernel (major.minor) or uid differs from the quote's, a
# block that differs is not comparable and the check skips (77) saying so.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
for f in "$top/build/bin/uring-info" "$top/build/helpers/no-uring"; do
    [ -x "$f" ] || { echo "FAIL: $f missing (make; scripts/test.sh builds the helper)"; exit 1; }
done
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is not installed (scripts/install-deps.sh installs it)"; exit 1; }
cd "$top"
exec python3 - README.md docs/*.md <<'EOF'
import os, re, subprocess, sys

CMD = re.compile(r'^\$ ((build/helpers/no-uring (EPERM|ENOSYS|EACCES) )?build/bin/uring-info)$')
ELIDE = re.compile(r'^\s*\[\.\.\. (\d+) more lines?, all (\S+) \.\.\.\]$')
FIELDS = [
    (re.compile(r'^(  release +)(\d+\.\d+)\S*( .*)$'), r'\1\2.*\3'),
    (re.compile(r'^(  user +)uid \d+, euid \d+$'), r'\1uid N, euid N'),
    (re.compile(r'^(  RLIMIT_MEMLOCK +).*$'), r'\1N'),
    (re.compile(r'^(  seccomp +2 \(filter; )\d+( installed\))$'), r'\1N\2'),
]

def norm(line):
    for pat, rep in FIELDS:
        line = pat.sub(rep, line)
    return line.rstrip()

def env(lines):
    """The kernel (major.minor) and user line of a report."""
    rel = next((m.group(1) for l in lines for m in [re.match(r'^  release +(\d+\.\d+)', l)] if m), None)
    user = next((l.split(None, 1)[1] for l in lines if l.startswith('  user ')), None)
    return rel, user

def value(line):
    """The answer of a list line (the names in cut lists have no spaces)."""
    parts = line.split(None, 1)
    return parts[1] if len(parts) > 1 else ''

def compare(quote, real):
    """None if `quote` matches `real`, else why not."""
    i, gap = 0, False
    for q in quote:
        if q.strip() == '...':
            gap = True
            continue
        m = ELIDE.match(q)
        if m:
            n, word = int(m.group(1)), m.group(2)
            if gap or i + n > len(real):
                return f'"{q.strip()}": not {n} lines left'
            for r in real[i:i + n]:
                if not value(r).startswith(word):
                    return f'"{q.strip()}" stands for "{r.strip()}"'
            i += n
            continue
        want = norm(q)
        if gap:
            while i < len(real) and norm(real[i]) != want:
                i += 1
            if i == len(real):
                return f'not in the output: "{q}"'
            gap = False
        elif i >= len(real) or norm(real[i]) != want:
            got = real[i] if i < len(real) else '(end of output)'
            return f'quoted "{q}", the program prints "{got}"'
        i += 1
    if not gap and i != len(real):
        return f'the program prints more after the quote ends: "{real[i]}"'
    return None

failed, skipped, checked = [], [], 0
here_rel = '.'.join(os.uname().release.split('.')[:2])
for path in sys.argv[1:]:
    lines = open(path, encoding='utf-8').read().split('\n')
    k = 0
    while k < len(lines):
        if lines[k].strip() != '```text':
            k += 1
            continue
        end = lines.index('```', k + 1)
        block, start, k = lines[k + 1:end], k + 1, end + 1
        m = CMD.match(block[0]) if block else None
        if not m:
            continue
        where = f'{path}:{start + 1}'
        quote = block[1:]
        rel, user = env(quote)
        if rel is None:
            failed.append(f'{where}: the quote names no kernel release')
            continue
        env_ = {n: v for n, v in os.environ.items() if not n.startswith('LIBURING_RS_')}
        p = subprocess.run(m.group(1).split(), capture_output=True, text=True, env=env_)
        real = p.stdout.rstrip('\n').split('\n')
        checked += 1
        if p.returncode != 0:
            failed.append(f'{where}: `{m.group(1)}` exited {p.returncode}')
            continue
        why = compare(quote, real)
        if why is None:
            continue
        here_user = env(real)[1]
        if rel != here_rel or (user is not None and user != here_user):
            skipped.append(f'{where} was taken on Linux {rel} ({user or "user not quoted"}), '
                           f'this is Linux {here_rel} ({here_user}): {why}')
        else:
            failed.append(f'{where}: {why}')

for f in failed:
    print('FAIL:', f)
for s in skipped:
    print('not comparable here:', s)
if failed:
    sys.exit(1)
if checked == 0:
    print('FAIL: no uring-info report quoted in README.md or docs/')
    sys.exit(1)
if skipped:
    print(f'skip: {len(skipped)} of {checked} quoted uring-info reports were taken on another kernel or user')
    sys.exit(77)
print(f'{checked} quoted uring-info reports match the program')
EOF
