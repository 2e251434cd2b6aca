#!/bin/sh
# deploy/prometheus through promtool, as a user would before loading it:
# the scrape config (with the rule file it names), the rules, and the rule
# unit tests (input series, expected alerts and recorded values).
# argv: DEPLOY_PROMETHEUS_DIR
set -eu
dir=$1
promtool=/usr/bin/promtool
if [ ! -x "$promtool" ]; then
    echo "SKIP: $promtool is missing (Debian package prometheus)"
    exit 77
fi
cd "$dir"
"$promtool" check config prometheus.yml
"$promtool" check rules hammer-rules.yml
"$promtool" test rules hammer-rules.test.yml
echo "promtool: config, rules and rule tests of $dir pass"
