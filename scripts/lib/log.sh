# shellcheck shell=bash
# log.sh — copy a script's output to a file without losing its end (sourced).
#
#   log_to FILE   from here on, standard output and standard error also go to
#                 FILE (emptied first); when the script exits, the copy is
#                 complete: the exit trap closes the pipe to tee and waits
#                 for it, so nothing that reads FILE next sees a cut-off end.
#                 The exit status is kept. It sets the EXIT trap.

log_to() {
	mkdir -p "$(dirname "$1")"
	: >"$1"
	exec {LOG_OUT}>&1 {LOG_ERR}>&2
	exec > >(exec tee -a "$1") 2>&1
	LOG_TEE=$!
	trap log_close EXIT
}

log_close() {
	exec 1>&"$LOG_OUT" 2>&"$LOG_ERR" {LOG_OUT}>&- {LOG_ERR}>&-
	wait "$LOG_TEE" 2>/dev/null || true
}
