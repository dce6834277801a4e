#!/usr/bin/env python3
"""func-lengths.py MAX FILE...: list the C / CUDA functions longer than MAX lines, counted from
the definition's first line to its closing brace (a '}' in column 0), longest first; exit 1
when there is one. The library: tools/func-lengths.py 120 core/*.c graph/*.c datasets/*.c
sampler/*.c partition/*.c train/*/*.c (add the .cu files alike)."""
import re
import sys


def functions(path):
    """(length, name, first line) of each function definition in path."""
    lines = open(path, errors='replace').read().split('\n')
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        opens = line.startswith('{') or (
            line and not line[0].isspace() and re.search(r'\)\s*\{\s*$', line)
            and not re.match(r'(struct|enum|union|typedef|static const|const)\b.*=', line))
        if not opens:
            i += 1
            continue
        j = i if not line.startswith('{') else i - 1
        while j > 0 and lines[j].startswith((' ', '\t')):
            j -= 1  # back to the signature's first line
        head = ' '.join(lines[j:i + 1])
        if '(' not in head or '=' in lines[j].split('(')[0]:
            i += 1
            continue
        k = i + 1
        while k < len(lines) and not lines[k].startswith('}'):
            k += 1
        m = re.search(r'(\w+)\s*\(', head)
        out.append((k - j + 1, m.group(1) if m else '?', j + 1))
        i = k + 1
    return out


def main():
    limit = int(sys.argv[1])
    over = sorted(((n, f'{p}:{first}', name) for p in sys.argv[2:] for n, name, first in functions(p) if n > limit),
                  reverse=True)
    for n, where, name in over:
        print(f'{n:5d} {where} {name}')
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
