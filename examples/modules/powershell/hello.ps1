#!powershell
# An example new-style PowerShell module: greets `name`. sandball assembles it (Module
# Replacer for PowerShell) but does not run PowerShell; see README.md in this folder.

# POWERSHELL_COMMON
#Requires -Module Ansible.ModuleUtils.Greeting

$params = Parse-Args $args -supports_check_mode $true
$name = Get-AnsibleParam -obj $params -name "name" -type "str" -failifempty $true

Exit-Json @{ changed = $false; greeting = (Get-Greeting -Name $name) }
