#include "autoconf.h"

#include <errno.h>
#include <string.h>

#include "xmalloc.h"
#include "yamldoc.h"

int
yamldoc_load(const char *text, yaml_document_t *doc, char **cause)
{
	yaml_parser_t	parser;

	if (!yaml_parser_initialize(&parser)) {
		xasprintf(cause, "out of memory");
		return (-ENOMEM);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text,
	    strlen(text));
	if (!yaml_parser_load(&parser, doc)) {
		xasprintf(cause, "line %zu, column %zu: %s",
		    (size_t)parser.problem_mark.line + 1,
		    (size_t)parser.problem_mark.column + 1,
		    parser.problem ? parser.problem : "bad YAML");
		yaml_parser_delete(&parser);
		return (-EINVAL);
	}
	yaml_parser_delete(&parser);
	return (0);
}
