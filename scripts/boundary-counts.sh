#!/bin/bash
# Usage: bash scripts/boundary-counts.sh <checkout>   (the counts of the "one narrow door for text money" review:
# files reaching text money's insides, concepts on the messages path, AppContext members, any / as unknown as)
cd "$1" || exit 1
# Text money's internals: before the refactor, every text-money file in src/modules/text/; after it,
# every file of src/modules/text-money/ but its door, index.ts.
OLD='modules/text/text-(billing|floats?|holds|money(-ops|-whole)?)\.ts'
OLD_IMPORT='text-(billing|floats?|holds|money(-ops|-whole)?)\.ts'
echo "== 1. files (outside text money's own) importing its internals or reaching them through ctx / the float read helpers"
{
  # imports of an old internal file (relative paths: ./text-floats.ts, ../text/text-money.ts ...)
  grep -rlE --include=*.ts "from '[./a-z-]*/$OLD_IMPORT'" src test bench scripts 2>/dev/null
  # imports of a new internal file: anything in text-money/ but index.ts
  grep -rlE --include=*.ts "from '[./a-z-]*text-money/[a-z-]+\.ts'" src test bench scripts 2>/dev/null | xargs -r grep -lE "from '[./a-z-]*text-money/([^i'][a-z-]*|i[^n][a-z-]*)\.ts'"
  # the machinery through ctx, and the float read helpers
  # (before the refactor ctx.textMoney was the group commit itself, so any use of it counts)
  if [ -d src/modules/text-money ]; then CTX='\.textMoney\.(add|addSoon|queue)\('; else CTX='\.textMoney\.'; fi
  grep -rlE --include=*.ts "\.textFloats\b|$CTX|\b(unspentHeld|openHoldsOf|readFloatRoom)\b" src test bench scripts 2>/dev/null
} | sort -u | grep -vE "^src/$OLD$|^src/modules/text-money/" > "${TMPDIR:-/tmp}/boundary-importers.txt"
for d in src test bench; do printf '%s: %s\n' "$d" "$(grep -c "^$d/" "${TMPDIR:-/tmp}/boundary-importers.txt")"; done
sed 's/^/   /' "${TMPDIR:-/tmp}/boundary-importers.txt"
echo "== 2. concepts on the POST /v1/messages path (of the issue's list) in the files a reader opens down to the money"
if [ -d src/modules/text-money ]; then
  PATHFILES="src/modules/messages/messages.routes.ts src/modules/text/text.service.ts src/modules/text/prompt-size.ts src/modules/text/call-price.ts src/modules/text-money/index.ts"
else
  PATHFILES="src/modules/messages/messages.routes.ts src/modules/text/text.service.ts src/modules/text/prompt-size.ts src/modules/text/text-billing.ts src/modules/text/text-floats.ts src/modules/text/text-float.ts src/modules/text/text-money.ts src/modules/text/text-money-ops.ts src/modules/text/text-money-whole.ts"
fi
n=0
while IFS='|' read -r name re; do
  if cat $PATHFILES | grep -v '^\s*//' | grep -qE "$re"; then n=$((n+1)); echo "   + $name"; fi
done <<'LIST'
holds|\bhold\b|holdFor|HeldCall
call ids|call_id|callId
floats|[Ff]loats?\b
headroom|HEADROOM
growth|growth
retirement|retire
op kind hold|kind: 'hold'
op kind settle|kind: 'settle'|TextSettle
op kind spend|kind: 'spend'|TextSpend
op kind release|kind: 'release'|TextRelease
op kind close|kind: 'close'|TextClose
add|\.add\(
addSoon|addSoon
queue|\.queue\(
flush|\.flush\(
whole vs careful writes|Whole|Carefully
at-once vs named statements|atOnce|namedStatements
sweeper|settleLostHolds|sweep
quota snapshots|quotas\.|QuotaSnapshots
value-or-promise|instanceof Promise|\| Promise<
LIST
echo "   total: $n of 20; files: $(echo $PATHFILES | wc -w), lines: $(cat $PATHFILES | wc -l)"
echo "== 3. AppContext members"
awk '/^export interface AppContext \{/,/^\}/' src/context.ts | grep -cE '^  [a-zA-Z]+\??(\(|:)'
echo "== 4. any / as unknown as (src; src+test+bench)"
ANY='(:\s*any\b|<any\b|\bany>|\bas any\b|\bany\[\])'
printf 'any: %s; %s\n' "$(grep -rnE "$ANY" src | wc -l)" "$(grep -rnE "$ANY" src test bench --exclude-dir='.portkey*' | wc -l)"
printf 'as unknown as: %s; %s\n' "$(grep -rn 'as unknown as' src | wc -l)" "$(grep -rn 'as unknown as' src test bench --exclude-dir='.portkey*' | wc -l)"
echo "== 5. src files naming the text_holds table outside text money's own (migrations and db/types.ts aside)"
grep -rlE --include=*.ts "text_holds" src | grep -vE "^src/$OLD$|^src/modules/text-money/|^src/db/(migrations/|types\.ts)" | sed 's/^/   /'
