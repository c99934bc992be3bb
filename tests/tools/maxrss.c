/* maxrss OUT COMMAND [ARGS...]: runs COMMAND, writes the peak resident set size of it
 * (and of its children) in KiB to the file OUT, and exits with COMMAND's exit status
 * (125 when it could not be run). Used by the end-to-end tests of peak memory; unlike
 * /usr/bin/time it is always there. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *out;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: maxrss OUT COMMAND [ARGS...]\n");
		return 125;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(125);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || getrusage(RUSAGE_CHILDREN, &ru) != 0) {
		perror("maxrss");
		return 125;
	}
	out = fopen(argv[1], "w");
	if (!out || fprintf(out, "%ld\n", ru.ru_maxrss) < 0 || fclose(out) != 0) {
		perror(argv[1]);
		return 125;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
