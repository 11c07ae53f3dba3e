# sandball — the two commands a new user needs: `make run` and `make test`.
# Everything else here is what those two install and build, cached between runs.

CARGO       ?= cargo
WASM_TARGET := wasm32-wasip2
# The static shims sandball deploys to nodes, one per architecture (musl, linked by
# Debian's GNU toolchains: .cargo/config.toml).
SHIM_TARGETS := x86_64-unknown-linux-musl aarch64-unknown-linux-musl
MODULES     := $(notdir $(wildcard modules-wasm/*))
# Each module's package, named with its version: a module may share its name with a
# crates.io dependency (`tempfile`), which a bare `-p tempfile` would make ambiguous.
MODULE_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MODULE_PKGS := $(addprefix -p ,$(addsuffix @$(MODULE_VERSION),$(MODULES)))
VENV        := target/venv
# One release exactly: tests/target-recaps.txt holds what this one prints.
ANSIBLE_PIN ?= ansible-core==2.19.14
PROFILE_DIR := target/debug
# The Python of the venvs below: Debian's, built with profile-guided optimisation (the
# reference's many runs take most of the tests' time) and readable by every user (so
# ansible-core can become the tests' users).
PYTHON      ?= /usr/bin/python3

.PHONY: all setup modules shims test-roots build install maturin wheel test-wheel ansible-runner run test nextest test-fixtures example-component componentize-py example-python-module js-tools example-js-module lint fmt-check clippy-driver python-venv bench ansible ansible-2.16 ansible-2.21 ansible-targets ansible-targets-2.21 fetch-targets-2.21 target-recaps target-recaps-2.21 wider-targets test-node ruby cron legacy-examples sshd apt-test packages test-deps test-build test-recordings test-recordings-verify check-recordings clean

all: build

## setup: the Rust targets (rustup): the modules' and the static shims'.
setup:
	@installed=$$(rustup target list --installed 2>/dev/null); \
	for t in $(WASM_TARGET) $(SHIM_TARGETS); do \
		printf '%s\n' "$$installed" | grep -qx "$$t" || rustup target add "$$t" || exit 1; done

## `make test` lints as it builds: cargo compiles the workspace's own crates through
## clippy-driver (the compiler `cargo clippy` runs), warnings denied, so the
## dependencies are compiled once rather than again for a separate `cargo clippy`
## (`make lint` is that separate run). The builds below take $(LINTING) for this.
CLIPPY_DRIVER = $(shell rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
test test-deps: LINTING = RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__

## clippy-driver: there must be one for `make test` to lint with.
clippy-driver:
	@test -x "$(CLIPPY_DRIVER)" || { echo "clippy-driver not found: rustup component add clippy" >&2; exit 1; }

## modules: the built-in module components (small, optimised: they run on every node).
## What sandball ships (`install`, `wheel`) and what `bench` measures has cross-crate
## LTO (the `wasm` profile's: a sixth fewer bytes for every node to receive and
## compile, for twice the CPU to build); `make build`, so `run` and `test`, builds them
## without it (MODULE_LTO=false): the same code in more bytes (docs/TESTING.md).
MODULE_LTO ?= false
install wheel bench: MODULE_LTO = fat
modules: setup
	CARGO_PROFILE_WASM_LTO=$(MODULE_LTO) $(LINTING) $(CARGO) build --profile wasm --target $(WASM_TARGET) $(MODULE_PKGS)

## shims: the static shims for x86_64 and aarch64 nodes (debug, as the controller), in
## target/<triple>/debug/, where the controller finds them. One cargo run for both: the
## build scripts and proc-macros they share are built once, and the two targets'
## crates keep both cores busy. The aarch64 linker is Debian's (`packages`).
shims: setup packages
	$(LINTING) $(CARGO) build -p sandball-shim $(addprefix --target ,$(SHIM_TARGETS))

## build: the controller, the static shims it deploys and the modules. No shim is built
## for the build machine's own C library: the static shim of its architecture
## ($(OWN_SHIM_TARGET)) serves it as it serves any node, and the shim's own tests run
## on it (`test-build`), so wasmtime is compiled for the two node targets and no third.
OWN_SHIM_TARGET := $(shell uname -m)-unknown-linux-musl
build: modules shims
	$(LINTING) $(CARGO) build -p sandball

## install: sandball for this machine, built for release, into $(PREFIX) (default
## /usr/local; DESTDIR stages it elsewhere): $(PREFIX)/bin/sandball and
## $(PREFIX)/lib/sandball/ (the built-in modules, a shim per node architecture), where
## the controller finds them from its own directory (docs/INSTALL.md).
PREFIX ?= /usr/local
install: modules packages
	$(CARGO) build --release -p sandball
	$(CARGO) build --release -p sandball-shim $(addprefix --target ,$(SHIM_TARGETS))
	packaging/stage-lib.sh release '$(DESTDIR)$(PREFIX)'
	install -D -m 0755 target/release/sandball '$(DESTDIR)$(PREFIX)/bin/sandball'

## maturin: the wheel builder, from PyPI into a venv of its own.
MATURIN_VENV := target/venv-maturin
MATURIN      := $(MATURIN_VENV)/bin/maturin
MATURIN_PIN  ?= maturin>=1.9,<2
maturin: $(MATURIN)
$(MATURIN): | python-venv
	$(PYTHON) -m venv $(MATURIN_VENV)
	$(MATURIN_VENV)/bin/pip install --quiet --disable-pip-version-check '$(MATURIN_PIN)'

## wheel: the Python wheel, release build, in target/wheels/release/ (pyproject.toml):
## `pip install` or `pipx install` of it gives a working `sandball` (docs/INSTALL.md).
## maturin builds the controller as the wheel's script; the modules and the shims are
## its data files, staged first by packaging/stage-lib.sh.
## test-wheel: the same from the dev profile, in target/wheels/dev/, for
## tests/tests/install.rs: the shim and modules `make build` made, and the controller
## as maturin builds it alone (`-p sandball`: its dependencies' features differ from
## `make build`'s, so about a minute of compiling the first time), packed uncompressed
## (deflating its debug shims took 20 s of CPU for a wheel that never leaves the machine).
# $(call build_wheel,PROFILE,DIR[,MATURIN OPTIONS]): the lib of target/DIR staged, then
# maturin.
define build_wheel
	packaging/stage-lib.sh $(2) target/wheel-data/data
	rm -rf target/wheels/$(1)
	$(LINTING) $(MATURIN) build --quiet --profile $(1) --out target/wheels/$(1) $(3)
endef
wheel: modules maturin packages
	$(CARGO) build --release -p sandball-shim $(addprefix --target ,$(SHIM_TARGETS))
	$(call build_wheel,release,release)
test-wheel: build maturin
	$(call build_wheel,dev,debug,--compression-method stored)

## run: the example playbook against localhost.
run: build
	$(PROFILE_DIR)/sandball playbook -i examples/inventory.ini examples/site.yml

## ansible: ansible-core from PyPI in a venv, the reference the tests and benchmarks compare
## against, with passlib (which its password_hash filter and vars_prompt encrypt need)
## and tomli-w (which ansible-inventory --toml needs).
ansible: $(VENV)/bin/ansible-playbook
$(VENV)/bin/ansible-playbook: | python-venv
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check '$(ANSIBLE_PIN)' passlib tomli-w

## ansible-runner: the tools that run ansible-playbook for Ansible users, from PyPI,
## in one venv: ansible-runner (the engine under AWX and Ansible Automation Platform),
## Molecule (which role authors test with) and ansible-builder (which makes the
## execution-environment image AWX runs jobs in), with the pinned ansible-core beside
## them (Molecule needs one). Each runs whichever ansible-playbook is first on PATH:
## tests/tests/ansible_runner.rs and molecule.rs run both ansible-playbook and sandball
## under them, execution_environment.rs runs ansible-builder. Installed again when the
## pins change (target/venv-runner/pins says which it holds).
RUNNER_VENV := target/venv-runner
RUNNER_PINS ?= ansible-runner>=2.4,<2.5 molecule==26.10.0 ansible-builder==3.2.0 $(ANSIBLE_PIN)
ansible-runner: | python-venv
	@[ "$$(cat $(RUNNER_VENV)/pins 2>/dev/null)" = '$(RUNNER_PINS)' ] || { \
		{ [ -x $(RUNNER_VENV)/bin/python ] || $(PYTHON) -m venv $(RUNNER_VENV); } && \
		echo "pip install $(RUNNER_PINS)" && \
		$(RUNNER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(foreach p,$(RUNNER_PINS),'$(p)') && \
		echo '$(RUNNER_PINS)' > $(RUNNER_VENV)/pins; }

## ansible-2.16: the older ansible-core whose module_utils layout the legacy tests also run.
VENV_216 := target/venv-2.16
ansible-2.16: $(VENV_216)/bin/ansible-playbook
$(VENV_216)/bin/ansible-playbook: | python-venv
	$(PYTHON) -m venv $(VENV_216)
	$(VENV_216)/bin/pip install --quiet --disable-pip-version-check 'ansible-core==2.16.*'

## ansible-2.21: the newest ansible-core (ANSIBLE_221_PIN), the second reference: the
## tests of what 2.20 and 2.21 changed for playbook authors run it and sandball in its
## semantics. It needs Python 3.12 or later, which Debian 12 lacks: tests/python312.sh
## finds one (PATH, pyenv) or builds CPython from Debian 13's source into
## $(PYTHON312_DIR), outside the checkout so that a fresh clone reuses it. The venv is
## made again when the pin changes (its `pin` file says which it holds).
VENV_221 := target/venv-2.21
ANSIBLE_221_PIN ?= ansible-core==2.21.5
PYTHON312_DIR ?= /var/cache/sandball-python3.13
ansible-2.21:
	@[ "$$(cat $(VENV_221)/pin 2>/dev/null)" = '$(ANSIBLE_221_PIN)' ] || { \
		python=$$(tests/python312.sh $(PYTHON312_DIR)) && rm -rf $(VENV_221) && \
		$$python -m venv $(VENV_221) && echo "pip install $(ANSIBLE_221_PIN) ($$python)" && \
		$(VENV_221)/bin/pip install --quiet --disable-pip-version-check '$(ANSIBLE_221_PIN)' passlib && \
		echo '$(ANSIBLE_221_PIN)' > $(VENV_221)/pin; }

## ansible-targets: ansible-core's own integration targets (test/integration/targets),
## from the PyPI sdist of the very version in $(VENV): tests/tests/integration_targets.rs
## runs them as ansible-test does. Fetched at test time, never kept in the repository.
## ansible-targets-2.21: the same from 2.21's sdist (of the release in $(VENV_221)), for
## the targets of what 2.21 added (`TARGETS_2_21` in that test file).
TARGETS_DIR := target/ansible-targets
# $(call fetch_targets,VENV,DIR): the targets of VENV's ansible-core release into DIR.
define fetch_targets
	rm -rf $(2) && mkdir -p $(2)/sdist
	version=$$($(1)/bin/python -c 'import ansible.release; print(ansible.release.__version__)') && \
	$(1)/bin/pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
		-d $(2)/sdist "ansible-core==$$version" && \
	tar -xzf $(2)/sdist/ansible_core-$$version.tar.gz -C $(2) \
		--strip-components=3 ansible_core-$$version/test/integration/targets
	rm -rf $(2)/sdist
endef
ansible-targets: $(TARGETS_DIR)/targets/ping
$(TARGETS_DIR)/targets/ping: $(VENV)/bin/ansible-playbook
	$(call fetch_targets,$(VENV),$(TARGETS_DIR))
TARGETS_221_DIR := target/ansible-targets-2.21
ansible-targets-2.21: ansible-2.21
	@[ "$$(cat $(TARGETS_221_DIR)/pin 2>/dev/null)" = '$(ANSIBLE_221_PIN)' ] || \
		$(MAKE) --no-print-directory fetch-targets-2.21
fetch-targets-2.21:
	$(call fetch_targets,$(VENV_221),$(TARGETS_221_DIR))
	echo '$(ANSIBLE_221_PIN)' > $(TARGETS_221_DIR)/pin

## target-recaps: records ansible-playbook's recaps of the targets listed in
## tests/tests/integration_targets.rs into tests/target-recaps.txt, by running each
## under both tools (run it after changing TARGETS or $(ANSIBLE_PIN);
## `ANSIBLE_TARGETS=a,b make target-recaps` records those and keeps the others'). `make
## test` runs ansible-playbook on a target only where sandball's recaps differ from these.
RECORD_DIR := target/target-recaps
RECAPS     := tests/target-recaps.txt
target-recaps: build ansible ansible-targets test-node test-fixtures nextest
	rm -rf $(RECORD_DIR) && mkdir -p $(RECORD_DIR)
	-ANSIBLE_TARGETS_RECORD=$(CURDIR)/$(RECORD_DIR) ANSIBLE_BIN_DIR=$(CURDIR)/$(VENV)/bin \
		$(CARGO) nextest run -p sandball-e2e -E 'test(/^integration_targets::/)' --no-fail-fast
	version="ansible-core $$($(VENV)/bin/python -c 'import ansible.release as r; print(r.__version__)')" && \
	{ sed -n '/^#/p' $(RECAPS); echo "$$version"; \
	  { if grep -qx "$$version" $(RECAPS); then \
	      grep -v -e '^#' -e '^ansible-core ' $(RECAPS) | while IFS= read -r line; do \
	        test -e "$(RECORD_DIR)/$${line%%	*}" || printf '%s\n' "$$line"; done; fi; \
	    for f in $(RECORD_DIR)/*; do sed "s/^/$$(basename $$f)	/" "$$f"; done; \
	  } | sort -s -t '	' -k1,1; } > $(RECORD_DIR).txt
	mv $(RECORD_DIR).txt $(RECAPS)

## target-recaps-2.21: the same for the 2.21 targets (`TARGETS_2_21`), into
## tests/target-recaps-2.21.txt, all of them anew.
RECAPS_221 := tests/target-recaps-2.21.txt
target-recaps-2.21: build ansible-targets-2.21 test-node test-fixtures nextest
	rm -rf $(RECORD_DIR)-2.21 && mkdir -p $(RECORD_DIR)-2.21
	-ANSIBLE_TARGETS_RECORD=$(CURDIR)/$(RECORD_DIR)-2.21 ANSIBLE_221_BIN_DIR=$(CURDIR)/$(VENV_221)/bin \
		$(CARGO) nextest run -p sandball-e2e -E 'test(/^integration_targets::ansible_core_2_21/)' --no-fail-fast
	{ sed -n '/^#/p' $(RECAPS_221); \
	  echo "ansible-core $$($(VENV_221)/bin/python -c 'import ansible.release as r; print(r.__version__)')"; \
	  for f in $(RECORD_DIR)-2.21/*; do sed "s/^/$$(basename $$f)	/" "$$f"; done | sort -s -t '	' -k1,1; \
	} > $(RECORD_DIR)-2.21.txt
	mv $(RECORD_DIR)-2.21.txt $(RECAPS_221)

## wider-targets: every self-contained POSIX target of ansible-core's sdist (not only
## those tests/tests/integration_targets.rs lists; the rules: `not_self_contained` in
## tests/src/targets.rs), each under ansible-playbook and sandball as that test runs
## them, with a time limit per target and tool (WIDER_TARGETS_LIMIT seconds, default
## 300; WIDER_TARGETS_JOBS targets at once, default 2): a table and a count in
## target/wider-targets.md, each failure's output in target/wider-targets/
## (docs/COMPATIBILITY.md). 40 minutes or more, so not a part of `make test`; on a machine
## where `make test` ran, its prerequisites are built already.
wider-targets: build ansible ansible-targets test-node
	ANSIBLE_BIN_DIR=$(CURDIR)/$(VENV)/bin $(CARGO) run --quiet -p sandball-e2e --bin wider-targets

## test-recordings: records ansible-core's runs in the tests that tests/recordings/tests.txt
## lists (their reference runs depend on their inputs alone): a file per test under
## tests/recordings/, and the venv's versions in tests/recordings/versions.txt. `make
## test` replays a recorded run whose inputs are byte for byte the same and runs any
## other live (tests/src/recording.rs). Run it after changing a listed test or
## $(ANSIBLE_PIN); `RECORD_TESTS='find:: meta::a_test' make test-recordings` records those
## alone and keeps the others'.
RECORDINGS := tests/recordings
# The nextest filter for the tests named in a list: `module::` for a module's tests, or
# a test's full name; `-` before either takes those out.
recorded_filter = $$(sed -e 's/\#.*//' -e 's/[[:space:]]//g' -e '/^$$/d' $(1) | awk '{ \
	out = sub(/^-/, ""); t = /::$$/ ? "test(/^" substr($$0, 1, length($$0) - 2) "::/)" : "test(=" $$0 ")"; \
	if (out) o = o (o ? " | " : "") t; else i = i (i ? " | " : "") t } \
	END { print "(" i ")" (o ? " - (" o ")" : "") }')
test-recordings: build ansible test-node legacy-examples test-fixtures example-component nextest
	@if [ -n "$(RECORD_TESTS)" ]; then printf '%s\n' $(RECORD_TESTS) > target/record-tests.txt; \
	else cp $(RECORDINGS)/tests.txt target/record-tests.txt && \
	  find $(RECORDINGS) -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +; fi
	E2E_REFERENCE=record ANSIBLE_BIN_DIR=$(CURDIR)/$(VENV)/bin ANSIBLE_216_BIN_DIR=$(CURDIR)/$(VENV_216)/bin \
		$(CARGO) nextest run -p sandball-e2e --no-fail-fast -E "$(call recorded_filter,target/record-tests.txt)"

## test-recordings-verify: runs the recorded tests with ansible-core live, each run
## compared with its recording (a test fails when they differ: its reference is not a
## function of its inputs, or the recording is stale).
test-recordings-verify: build ansible test-node legacy-examples test-fixtures example-component nextest
	E2E_REFERENCE=verify ANSIBLE_BIN_DIR=$(CURDIR)/$(VENV)/bin ANSIBLE_216_BIN_DIR=$(CURDIR)/$(VENV_216)/bin \
		$(CARGO) nextest run -p sandball-e2e --no-fail-fast -E "$(call recorded_filter,$(RECORDINGS)/tests.txt)"

## check-recordings: the recordings were made by the pinned ansible-core; if not, says so
## (the tests then run ansible-core live: slower, as correct).
PINNED_CORE = ansible-core $(patsubst ansible-core==%,%,$(ANSIBLE_PIN))
PINNED_221 = ansible-core $(patsubst ansible-core==%,%,$(ANSIBLE_221_PIN))
check-recordings:
	@for f in $(RECAPS) $(RECORDINGS)/versions.txt; do grep -qx '$(PINNED_CORE)' $$f || \
		echo "$$f was not recorded with the pinned $(PINNED_CORE): the tests run ansible-core live where it would serve (\`make target-recaps test-recordings\` records it anew)" >&2; done
	@grep -qx '$(PINNED_221)' $(RECAPS_221) || \
		echo "$(RECAPS_221) was not recorded with the pinned $(PINNED_221): the 2.21 targets run under ansible-playbook too (\`make target-recaps-2.21\` records them anew)" >&2

## packages: the Debian packages `make build` and `make test` need, those missing
## installed in one apt-get run (so that nothing else waits on the dpkg lock):
## gcc-aarch64-linux-gnu (the linker of the aarch64 shim), file (which tells the tests
## the shims are static), xz-utils (with which the SSH tests' nodes, this machine,
## decompress the shim they are sent), python3-venv (the venvs below are made with it), ruby (the WANT_JSON Ruby example module), cron (crontab,
## for tests/tests/cron.rs), openssh-server and sudo (the SSH tests start sshd on a
## loopback port; the become tests), acl (setfacl and getfacl, which ansible-test's
## bootstrap leaves on a node and ansible-core's targets use), python3-apt (under
## which ansible-core's apt module runs), debootstrap and qemu-user-static (which make
## the foreign nodes' roots: `test-roots`) and nodejs with npm (which build JavaScript
## modules: `js-tools`); and package lists, which the apt module's
## tests read (apt-get update when there are none). On a machine whose apt keeps no
## binary cache of those lists (Debian's container images turn it off), it is turned
## back on ($(APT_CACHE_CONF)): otherwise every apt-get, apt-cache and python3-apt
## run of the apt tests, under both tools, parses the whole lists again (about 1.5 s
## of CPU each; docs/TESTING.md).
APT_CACHE_CONF := /etc/apt/apt.conf.d/zz-sandball-tests-pkgcache
packages:
	@missing=; \
	command -v aarch64-linux-gnu-gcc >/dev/null || missing="$$missing gcc-aarch64-linux-gnu"; \
	command -v file >/dev/null || missing="$$missing file"; \
	command -v xz >/dev/null || missing="$$missing xz-utils"; \
	$(PYTHON) -c 'import ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	command -v ruby >/dev/null || missing="$$missing ruby"; \
	command -v crontab >/dev/null || missing="$$missing cron"; \
	[ -x /usr/sbin/sshd ] || missing="$$missing openssh-server"; \
	command -v sudo >/dev/null || missing="$$missing sudo"; \
	command -v setfacl >/dev/null || missing="$$missing acl"; \
	/usr/bin/python3 -c 'import apt' 2>/dev/null || missing="$$missing python3-apt"; \
	command -v debootstrap >/dev/null || missing="$$missing debootstrap"; \
	[ -x /usr/bin/qemu-aarch64-static ] || missing="$$missing qemu-user-static"; \
	command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ] || ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then \
		apt-get update -qq; fi; \
	if [ -n "$$missing" ]; then \
		echo "apt-get install$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi; \
	if [ -w /etc/apt/apt.conf.d ] && apt-config dump | grep -qx 'Dir::Cache::pkgcache "";'; then \
		echo "apt's binary cache turned back on: $(APT_CACHE_CONF)"; \
		printf '%s\n' '// make test (sandball): keep the binary cache of the package lists.' \
			'Dir::Cache::pkgcache "pkgcache.bin";' 'Dir::Cache::srcpkgcache "srcpkgcache.bin";' \
			> $(APT_CACHE_CONF); fi

## python-venv, ruby, cron, sshd, apt-test: each a part of `packages`, by the name it
## had before them (python3-venv; ruby; cron; openssh-server and sudo; python3-apt and
## the package lists).
python-venv ruby cron sshd apt-test: packages

## test-roots: the Debian roots of the foreign nodes tests/tests/foreign_nodes.rs starts
## an sshd in (a Debian 11 x86_64 node, an aarch64 one run by qemu-user-static, one
## without Python), made by tests/roots/make-root.sh with debootstrap from the Debian
## mirror, all three at once, into $(TEST_ROOTS) — outside the checkout, so that only
## the first `make test` on a machine makes them (a few minutes; docs/TESTING.md). A
## root is made again only when that script changes.
TEST_ROOTS ?= /var/cache/sandball-test-roots
ROOT_NAMES := bullseye-amd64 bullseye-arm64 bullseye-nopython
test-roots: packages
	@pids=; for root in $(ROOT_NAMES); do \
		tests/roots/make-root.sh $$root $(TEST_ROOTS) & pids="$$pids $$!"; done; \
	status=0; for pid in $$pids; do wait $$pid || status=1; done; exit $$status

## legacy-examples: the binary example module, compiled for this node.
legacy-examples:
	$(LINTING) $(CARGO) build -p sandball-example-binary

## Components built outside the main workspace share one target directory, so the guest
## SDK and its dependencies are compiled once for all of them.
COMPONENTS_DIR := $(CURDIR)/target/components

## test-fixtures: misbehaving module components the end-to-end tests load (tests/fixtures,
## a workspace of its own, built into target/components).
test-fixtures: setup
	cd tests/fixtures && CARGO_TARGET_DIR=$(COMPONENTS_DIR) $(CARGO) build --release --target $(WASM_TARGET)

## example-component: examples/modules/component, a third-party module written against the
## guest SDK alone (a workspace of its own, built into target/components).
example-component: setup
	cd examples/modules/component && CARGO_TARGET_DIR=$(COMPONENTS_DIR) $(CARGO) build --release --target $(WASM_TARGET)

## componentize-py: the tool that makes a Python module a component (PyPI), in a venv of
## its own (ansible-core must not be on its path: the component's `ansible.module_utils`
## is guest-sdk/python's).
COMPONENTIZE_VENV := target/venv-componentize
COMPONENTIZE_PIN  ?= componentize-py==0.25.1
componentize-py: $(COMPONENTIZE_VENV)/bin/componentize-py
$(COMPONENTIZE_VENV)/bin/componentize-py:
	$(PYTHON) -m venv $(COMPONENTIZE_VENV)
	$(COMPONENTIZE_VENV)/bin/pip install --quiet --disable-pip-version-check '$(COMPONENTIZE_PIN)'

## example-python-module: examples/modules/python (an Ansible module, unchanged) built
## into target/components/python/conf_line.wasm (packed by the controller built here);
## rebuilt only when its sources change.
PY_COMPONENTS := target/components/python
PY_SDK_SOURCES := $(shell find guest-sdk/python -name '*.py') guest-sdk/wit/sandball.wit
example-python-module: $(PY_COMPONENTS)/conf_line.wasm
$(PY_COMPONENTS)/conf_line.wasm: examples/modules/python/conf_line.py examples/modules/python/manifest.json $(PY_SDK_SOURCES) | $(COMPONENTIZE_VENV)/bin/componentize-py build
	mkdir -p $(PY_COMPONENTS)
	$(COMPONENTIZE_VENV)/bin/python guest-sdk/python/build.py --componentize-py $(CURDIR)/$(COMPONENTIZE_VENV)/bin/componentize-py \
		--sandball $(CURDIR)/$(PROFILE_DIR)/sandball --manifest examples/modules/python/manifest.json examples/modules/python/conf_line.py -o $@

## js-tools: what makes a JavaScript module a component: componentize-js and rolldown,
## from npm, at the versions guest-sdk/js/package-lock.json pins (the JavaScript
## authors' package's own dependencies), in target/npm/node_modules. rolldown needs
## Node 20.19 or later (Debian 12's nodejs is 18: install a newer one, e.g. Debian 13's
## or NodeSource's, first).
JS_TOOLS := target/npm
js-tools: $(JS_TOOLS)/node_modules/.package-lock.json
$(JS_TOOLS)/node_modules/.package-lock.json: guest-sdk/js/package.json guest-sdk/js/package-lock.json | packages
	@node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a == 20 && b >= 19) ? 0 : 1)' || \
		{ echo "node $$(node --version) is too old for rolldown (Node 20.19 or later: docs/TESTING.md)" >&2; exit 1; }
	mkdir -p $(JS_TOOLS)
	cp guest-sdk/js/package.json guest-sdk/js/package-lock.json $(JS_TOOLS)/
	cd $(JS_TOOLS) && npm ci --no-audit --no-fund --loglevel=error

## example-js-module: examples/modules/js (conf_line, the Python example's module in
## JavaScript) built into target/components/js/conf_line.wasm (packed by the controller
## built here); rebuilt only when its sources change.
JS_COMPONENTS := target/components/js
JS_SDK_SOURCES := $(wildcard guest-sdk/js/src/*.js) guest-sdk/js/bin/build.mjs guest-sdk/wit/sandball.wit
example-js-module: $(JS_COMPONENTS)/conf_line.wasm
$(JS_COMPONENTS)/conf_line.wasm: examples/modules/js/conf_line.js examples/modules/js/manifest.json $(JS_SDK_SOURCES) | $(JS_TOOLS)/node_modules/.package-lock.json build
	mkdir -p $(JS_COMPONENTS)
	node guest-sdk/js/bin/build.mjs --tools $(CURDIR)/$(JS_TOOLS)/node_modules --sandball $(CURDIR)/$(PROFILE_DIR)/sandball \
		--manifest examples/modules/js/manifest.json examples/modules/js/conf_line.js -o $@

## test-node: what ansible-test's bootstrap leaves on a test node and ansible-core's
## targets rely on: setfacl and getfacl (Debian's acl, from `packages`: the copy and
## lineinfile targets) and an authorized_keys file in the user's ~/.ssh (the copy
## target copies it). As root, also the become tests' users (`tests/src/users.rs`
## makes them the same way when missing): made before the tests start, so that no test
## adds an account while a `users_groups` test compares the ids the two tools give
## new ones.
BECOME_TEST_USERS := sandball-become sandball-su
test-node: packages
	@[ -e "$$HOME/.ssh/authorized_keys" ] || \
		(install -d -m 0700 "$$HOME/.ssh" && install -m 0600 /dev/null "$$HOME/.ssh/authorized_keys")
	@if [ "$$(id -u)" = 0 ]; then for u in $(BECOME_TEST_USERS); do \
		id "$$u" >/dev/null 2>&1 || useradd -m -s /bin/sh -p '*' "$$u"; done; fi

## nextest: cargo-nextest, which runs the tests: each in a process of its own, several
## at once (.config/nextest.toml; tests that change the machine run one at a time).
nextest:
	@command -v cargo-nextest >/dev/null || $(CARGO) install --locked cargo-nextest

## test: every test (unit, shim, end-to-end), plus format and lint checks. What the
## tests need is made first, side by side (`make -j`): the package installs and
## downloads wait on the network while cargo compiles, and one cargo build's serial
## stretches (a link, a big crate) leave a core to the other; then cargo-nextest runs
## the tests.
TEST_DEPS := clippy-driver fmt-check check-recordings test-roots build ansible ansible-2.16 ansible-2.21 ansible-targets ansible-targets-2.21 test-node ruby cron legacy-examples test-fixtures example-component example-python-module example-js-module sshd apt-test nextest test-build test-wheel ansible-runner
test:
	$(MAKE) --no-print-directory -j4 --output-sync=target test-deps
	status=0; \
	$(LINTING) $(CARGO) nextest run -p sandball-shim --target $(OWN_SHIM_TARGET) --no-fail-fast || status=1; \
	SANDBALL_TEST_ROOTS=$(TEST_ROOTS) ANSIBLE_BIN_DIR=$(CURDIR)/$(VENV)/bin ANSIBLE_216_BIN_DIR=$(CURDIR)/$(VENV_216)/bin ANSIBLE_221_BIN_DIR=$(CURDIR)/$(VENV_221)/bin $(LINTING) $(CARGO) nextest run --workspace --exclude sandball-shim --no-fail-fast || status=1; \
	exit $$status
test-deps: $(TEST_DEPS)

## test-build: the test binaries, as cargo-nextest builds them (`cargo test --no-run`,
## linted), so that they are built beside the other prerequisites: the shim's for its
## static target (`build`), the others' for this machine.
test-build: build
	$(LINTING) $(CARGO) test -p sandball-shim --target $(OWN_SHIM_TARGET) --no-run
	$(LINTING) $(CARGO) test --workspace --exclude sandball-shim --no-run

fmt-check:
	$(CARGO) fmt --all -- --check

## lint: format and clippy on their own (`make test` lints while it builds).
lint: fmt-check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## bench: examples/bench against sandball (release) and ansible-playbook, same run: on
## the local connection, then over SSH to a loopback sshd (10 host aliases, with
## ansible-playbook pipelining), then sandball alone over SSH to 100 aliases, then
## ansible-core's Python ping/file/stat through sandball's Ansiballz (local, LEGACY=1),
## then inventory --list on 10,000 generated hosts against ansible-inventory, then the
## same tasks in a 10-host and a 10,010-host inventory (a task must not cost more in a
## larger inventory), then plays of 200, 2,000 and 20,000 hosts (the controller's cost
## per task-host and memory per host must stay flat), then the Python module component
## (size, first compile, a warm task), then 200 hosts behind proxies that cut
## connections, then 10 and 50 nodes behind proxies at 1, 20 and 80 ms RTT and
## 100 Mbit/s against ansible-playbook (network.sh); at the end, every ratio against
## ansible-core in one table.
bench: export BENCH_SUMMARY := $(CURDIR)/target/bench-summary.md
bench: setup modules ansible sshd example-python-module example-js-module
	$(CARGO) build --release -p sandball -p sandball-shim
	$(CARGO) build --release -p sandball-e2e --bin netproxy
	printf '| run | sandball cold | sandball warm | ansible-core | ratio cold | ratio warm |\n|---|---|---|---|---|---|\n' > "$$BENCH_SUMMARY"
	examples/bench/run.sh
	BENCH_CONNECTION=ssh examples/bench/run.sh
	BENCH_CONNECTION=ssh HOSTS=100 FORKS=50 SKIP_ANSIBLE=1 examples/bench/run.sh
	LEGACY=1 examples/bench/run.sh
	examples/bench/inventory.sh
	examples/bench/task_scale.sh
	examples/bench/many_hosts.sh
	examples/bench/python_module.sh
	LANGUAGE=js examples/bench/python_module.sh
	examples/bench/under_faults.sh
	examples/bench/network.sh
	@echo; echo "Every ratio, ansible-core / sandball, measured in this run ($$(date -u '+%F %H:%M UTC'), load $$(cut -d' ' -f1-3 /proc/loadavg)):"; cat "$$BENCH_SUMMARY"

clean:
	$(CARGO) clean
