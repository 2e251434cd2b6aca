# Thin wrapper around CMake. `make run` and `make check` are the README's two
# set-up commands: each installs missing Debian packages first.
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

# ctest arguments of `make check` and `make check-asan` (e.g. -LE misbehave
# to leave out hammer against a misbehaving server).
CTEST_EXCLUDE ?=

.PHONY: all deps configure build quiet-build run check check-asan check-tsan check-misbehave \
	check-loaded bench format format-check check-layers screenshots report-screenshots fuzz-build \
	fuzz fuzz-smoke clean

all: build

deps:
	@sh scripts/deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The build for `make run` and `make check`: one line per stage, the
# build's output in a log, shown only on failure.
quiet-build:
	@sh scripts/deps.sh
	@mkdir -p $(BUILD)
	@echo "[1/3] configure  $(BUILD)/"
	@test -f $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) \
	    > $(BUILD)/configure.log 2>&1 || { cat $(BUILD)/configure.log; exit 1; }
	@echo "[2/3] build      (log: $(BUILD)/build.log)"
	@cmake --build $(BUILD) -j $(JOBS) > $(BUILD)/build.log 2>&1 || \
	  { tail -n 40 $(BUILD)/build.log; echo "build failed; the whole log: $(BUILD)/build.log"; exit 1; }

# The main job: the default scenario against the embedded bench_app; then
# the summary and where the HTML report is.
run: quiet-build
	@echo "[3/3] run        hammer -c 200 -n 5000 scenario spreadsheet"
	@$(BUILD)/bin/hammer -c 200 -n 5000 --html $(BUILD)/report.html --json $(BUILD)/report.json \
	  scenario spreadsheet; rc=$$?; \
	  echo "HTML report: $(BUILD)/report.html  (JSON: $(BUILD)/report.json; docs/reports.md)"; \
	  exit $$rc

check: quiet-build
	@echo "[3/3] test       ctest in $(BUILD)/"
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_EXCLUDE)

# hammer against a misbehaving server and a faulty bench_app (issue 11;
# `make check` runs them too).
check-misbehave: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L misbehave

# `make check` with two CPU-bound loops beside it: every test must hold on a
# busy machine (the loops are killed at the end, whatever happens).
check-loaded: build
	sh scripts/check-loaded.sh $(MAKE) --no-print-directory check JOBS=$(JOBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
check-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DHAMMER_SANITIZE=address,undefined $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_EXCLUDE)

# The tests `make check-tsan` runs, a ctest -R regex over test names: the
# engine's (engine_*, both backends), hammer's threads against bench_app's
# workers (threads_*), the scenarios' (cli_scenarios: every built-in
# scenario against bench_app; sticky_*), the flows run end to end
# (flow_run) and the consistency suite (consistency_*).
TSAN_TESTS ?= ^(engine_|threads_|cli_scenarios$$|sticky_|flow_run$$|consistency)
TSAN_REPORTS = $(CURDIR)/$(TSAN_BUILD)/tsan-reports
# A report stops the process at once with exit 66, so the test that ran it
# is red; it goes to a file (log_path), since a test may swallow the stderr
# of the hammer it runs: any race or other warning there fails the target.
# (ERROR files are deaths a test may cause on purpose, as engine_stacks'
# stack overflow; the test judges those by their exit.)
TSAN_RUN_OPTIONS = halt_on_error=1 exitcode=66 second_deadlock_stack=1 \
	log_path=$(TSAN_REPORTS)/tsan log_exe_name=1 \
	$(if $(wildcard tsan.supp),suppressions=$(CURDIR)/tsan.supp) $(TSAN_OPTIONS)

# Those tests under ThreadSanitizer (coroutines are TSan fibers: coro.c).
check-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DHAMMER_SANITIZE=thread $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	@cd $(TSAN_BUILD) && TSAN_OPTIONS="$(strip $(TSAN_RUN_OPTIONS))" \
	  ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)' $(CTEST_EXCLUDE); rc=$$?; \
	  found=$$(grep -l 'WARNING: ThreadSanitizer' $(TSAN_REPORTS)/* 2>/dev/null); \
	  for f in $$found; do echo "== $$f"; cat "$$f"; done; \
	  if [ -n "$$found" ]; then \
	    echo "check-tsan: $$(echo $$found | wc -w) ThreadSanitizer report(s), above"; exit 1; fi; \
	  exit $$rc

# .clang-format over every C source and header we write (CI runs the check).
FORMAT_DIRS := $(wildcard src include bench_app tests bench examples fuzz)
FORMAT_FILES = $(shell find $(FORMAT_DIRS) -name '*.c' -o -name '*.h' | sort)

format-check:
	@clang-format --dry-run -Werror $(FORMAT_FILES) && echo "format: every file is clang-formatted"

format:
	clang-format -i $(FORMAT_FILES)

# Lower layers never include higher ones (docs/architecture.md); also a
# test (ctest -R layers), so `make check` runs it.
check-layers:
	@bash scripts/check-layers.sh

# docs/img/: the live view, both HTML reports and the Prometheus console,
# from runs made here, in headless Chromium (scripts/screenshots.py).
screenshots: build
	python3 scripts/screenshots.py $(BUILD) docs/img

# The two HTML reports only (docs/img/report.png, matrix.png).
report-screenshots: build
	python3 tests/tools/report_screenshots.py $(BUILD)/bin/hammer $(BUILD)/bin/bench_app docs/img

# libFuzzer harnesses (fuzz/), clang with ASan and UBSan, in their own build
# directory. `make fuzz` runs each for FUZZ_SECONDS (FUZZ_JOBS at a time);
# `make fuzz-smoke` for 20 s each, as CI does. Any finding fails the target.
fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DHAMMER_FUZZ=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) --target fuzz_all -j $(JOBS)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh $(FUZZ_BUILD)

fuzz-smoke: fuzz-build
	FUZZ_SECONDS=20 bash scripts/fuzz.sh $(FUZZ_BUILD)

bench: build
	HAMMER_DEPS_EXTRA=1 sh scripts/deps.sh
	bash bench/run_all.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
