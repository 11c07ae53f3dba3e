#!/bin/sh
echo '{"web": "w1"}'
