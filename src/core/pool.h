#ifndef TOPOAWARE_POOL_H
#define TOPOAWARE_POOL_H
#endif
