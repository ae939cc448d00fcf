#!/usr/bin/env bash
# `npm test`: lint, typecheck, unit tests, build, control-plane build, e2e. Every step runs even
# after an earlier one failed (except e2e without a control plane), and the last line printed is
# `N passed, N failed, N skipped` over both vitest JSON reports, which is what CI reads. A failed
# step that reports no failed test (lint, typecheck, build, a crashed run) counts as one failure,
# so that line never looks green when the exit code is not.
set -u
cd "$(dirname "$0")/.."
reports=.cache/test-reports
mkdir -p "$reports"
rm -f "$reports"/*.json "$reports"/steps.tsv

# Records "name<TAB>exit code<TAB>report" per step for the summary.
step() { # name, report ('' if none), command...
  local name=$1 report=$2 rc
  shift 2
  printf '\n===== %s =====\n' "$name"
  "$@"
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$report" >>"$reports/steps.tsv"
  [ "$rc" -eq 0 ] || printf '===== %s failed (exit %s) =====\n' "$name" "$rc"
  return "$rc"
}

vitest_json() { # report path, vitest args...
  local out=$1
  shift
  npx vitest run --reporter=default --reporter=json --outputFile="$out" "$@"
}

step lint '' npm run --silent lint
step typecheck '' npm run --silent typecheck
step 'unit tests' "$reports/unit.json" vitest_json "$reports/unit.json"
step build '' npm run --silent build

bin_dir=''
control_plane() { # build.sh prints the bin directory on its last stdout line
  local out
  out=$(bash e2e/cluster/build.sh) || return 1
  bin_dir=${out##*$'\n'}
  [ -n "$bin_dir" ]
}
if step 'control-plane build' '' control_plane; then
  export KRELOAD_E2E_BIN_DIR=$bin_dir
  if ! step e2e "$reports/e2e.json" vitest_json "$reports/e2e.json" --config e2e/vitest.config.ts; then
    # What the shared control plane said (klog errors and warnings) explains most e2e failures.
    kcm_log=.cache/e2e-logs/shared-kube-controller-manager.log
    if [ -f "$kcm_log" ]; then
      printf '\n===== last kube-controller-manager errors (%s) =====\n' "$kcm_log"
      grep -E '^[EW][0-9]{4} ' "$kcm_log" | tail -n 20
    fi
  fi
else
  printf '\n===== e2e skipped: no control plane =====\n'
  printf 'e2e\t1\t\n' >>"$reports/steps.tsv"
fi

printf '\n'
npx node - "$reports/steps.tsv" <<'NODE'
const fs = require('node:fs');
const totals = { passed: 0, failed: 0, skipped: 0 };
const failedSteps = [];
const failedNames = [];
for (const line of fs.readFileSync(process.argv[2], 'utf8').trim().split('\n')) {
  const [name, rc, report] = line.split('\t');
  let failedTests = 0;
  if (report && fs.existsSync(report)) {
    const r = JSON.parse(fs.readFileSync(report, 'utf8'));
    totals.passed += r.numPassedTests;
    totals.skipped += r.numPendingTests + r.numTodoTests;
    failedTests = r.numFailedTests;
    totals.failed += failedTests;
    // Named here, after the control plane's log, so the last lines CI keeps say which test failed.
    for (const file of r.testResults) {
      for (const test of file.assertionResults.filter((t) => t.status === 'failed')) {
        const why = (test.failureMessages[0] ?? '').split('\n')[0].slice(0, 300);
        failedNames.push(`${name}: ${file.name.replace(process.cwd() + '/', '')} > ${test.fullName}\n    ${why}`);
      }
    }
  }
  if (rc !== '0') {
    failedSteps.push(`${name} (exit ${rc})`);
    if (failedTests === 0) totals.failed += 1;
  }
}
for (const failed of failedNames) console.log(`failed: ${failed}`);
console.log(failedSteps.length === 0 ? 'all steps passed' : `failed steps: ${failedSteps.join(', ')}`);
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exitCode = failedSteps.length === 0 ? 0 : 1;
NODE
