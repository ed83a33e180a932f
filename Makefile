# formwright: `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
FW := $(BIN)/formwright
# The demo's local cloud lives in the user's own home (FORMWRIGHT_HOME, default ~/.formwright), the one the
# shell's `formwright` finds afterwards: a private home here would leave `formwright status` saying "not
# running" and the examples' `local-cloud start` starting a second, empty cloud (issue 31).

.PHONY: demo test install test-deps lint bench conformance clean stop k8s instances-image instances-layers-drop

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

demo: install
	$(FW) local-cloud start
	$(FW) deploy examples/three-tier --yes
	@# deploy shows the outputs of the stacks it changed; a second demo (the local cloud keeps its state)
	@# changes none, so the outputs are shown from the cloud every time
	$(FW) outputs examples/three-tier
	@echo
	@echo "The local cloud keeps running in your formwright home; in your shell:"
	@echo "  . $(VENV)/bin/activate && formwright status examples/three-tier"
	@echo "Stop it with: formwright local-cloud stop"

test-deps: install
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@# shellcheck lints the TOSCA plugin's scripts; graphviz renders `formwright graph --format svg`;
	@# openssh-server's sshd serves the SSH git clone of tests/sync/test_git_ssh.py; tmux is the fixed-size
	@# terminal of tests/cli/test_display.py
	@missing=""; command -v shellcheck >/dev/null 2>&1 || missing="$$missing shellcheck"; \
	 command -v dot >/dev/null 2>&1 || missing="$$missing graphviz"; \
	 command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	 [ -x /usr/sbin/sshd ] || command -v sshd >/dev/null 2>&1 || missing="$$missing openssh-server"; \
	 if [ -n "$$missing" ] && command -v apt-get >/dev/null 2>&1; then \
	   apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $$missing >/dev/null 2>&1) || \
	   echo "could not install$$missing: the tests that need them say so"; fi

# A real kube-apiserver (and kubectl) for tests/k8s, built once per machine into ~/.cache/formwright/k8s
# from Debian's source package (tests/k8s/build-apiserver.sh says how). `make test` builds it the first
# time; when it cannot be built, tests/k8s skip with the reason the build wrote.
k8s:
	bash tests/k8s/build-apiserver.sh

# tests/sceptre install sceptre 4.7 themselves the first time, from the registry into a venv of its own,
# ~/.cache/formwright/sceptre-4.7.0-py3.X (tests/sceptre/install.py: it pins an old jsonschema that would
# break aws-sam-translator here), and reuse it after; they skip, saying why, only where it cannot be had.
test: test-deps
	-@$(MAKE) --no-print-directory k8s
	-@$(MAKE) --no-print-directory instances-image
	$(BIN)/python -m pytest -n 2 --dist worksteal -q -p no:cacheprovider

# The Debian root every booting local-cloud instance is copied from (`local_cloud: {instances: boot}`):
# built once per machine with debootstrap into ~/.cache/formwright/instances/bookworm, reused after.
# `make test` builds it (and the MariaDB layer) before the suite, as k8s; when it cannot, tests/instances
# skip saying why.
instances-image:
	@command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || apt-get install -y -qq debootstrap
	sh src/formwright/cloud/instances/image.sh
	$(BIN)/python -m formwright.cloud.instances.variants

# The cached layers over the image (MariaDB's; one per package set cfn-init installed: snapshots of Debian's
# registry when built). Dropped with no local cloud running instances; the next boot that needs one rebuilds it.
instances-layers-drop:
	rm -rf "$${XDG_CACHE_HOME:-$$HOME/.cache}"/formwright/instances/bookworm-*

lint: install
	$(BIN)/python -m pip install --quiet ruff mypy
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src

# One score line per corpus of ../shared/conformance (read in place, never copied): tests/conformance/run.py.
# Flags for the runner: make conformance ARGS="langext --verbose".
# The tosca corpus's `runs` column (booted instances, ~2 min with the package layers cached) is on by default;
# RUNS= leaves it out: make conformance RUNS= ARGS=tosca.
RUNS ?= --runs
conformance: install
	$(BIN)/python tests/conformance/run.py $(RUNS) $(ARGS)

bench: install
	$(BIN)/python bench/deploy.py

stop:
	-$(FW) local-cloud stop

clean: stop
	rm -rf $(VENV) examples/*/.formwright
