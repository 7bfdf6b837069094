/*
 * One YAML document from text in memory (libyaml's document API), for the
 * annotations whose values are YAML: affinities and cold start.
 */
#ifndef TOPOAWARE_YAMLDOC_H
#define TOPOAWARE_YAMLDOC_H

#include <yaml.h>

/* 0 with doc loaded (caller deletes it), or -errno with *cause saying
 * where the text is bad. */
int	yamldoc_load(const char *text, yaml_document_t *doc, char **cause);

#endif
