#!/bin/sh
echo "cannot reach the CMDB" >&2
exit 1
