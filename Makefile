# Entry points: `make test`, `make main`, `make bench` (see benchmarks/README.md).
.PHONY: test main bench

test:
	bash scripts/test.sh

main:
	bash scripts/main.sh

bench:
	bash scripts/setup.sh
	. .venv/bin/activate && python benchmarks/run_all.py
