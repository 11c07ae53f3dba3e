#!powershell
# hello: assembled by sandball (Module Replacer for PowerShell)
$global:complex_args = @'
{"name":"world","_ansible_check_mode":false}
'@ | ConvertFrom-Json

# ---- module_util Ansible.ModuleUtils.Legacy ----
New-Module -Name 'Ansible.ModuleUtils.Legacy' -ScriptBlock {
# A small stand-in for the Legacy PowerShell util, written for sandball's examples:
# argument parsing and JSON results.

Function Parse-Args($arguments, $supports_check_mode = $false) {
    $params = $complex_args
    if ($arguments.Length -gt 0) { $params = Get-Content $arguments[0] | ConvertFrom-Json }
    return $params
}

Function Get-AnsibleParam($obj, $name, $type = "str", $failifempty = $false) {
    $value = $obj.$name
    if ($failifempty -and -not $value) { Fail-Json @{} "missing required argument: $name" }
    return $value
}

Function Exit-Json($obj) {
    Write-Output ($obj | ConvertTo-Json -Compress -Depth 99)
    exit 0
}

Function Fail-Json($obj, $message) {
    $obj.msg = $message
    $obj.failed = $true
    Write-Output ($obj | ConvertTo-Json -Compress -Depth 99)
    exit 1
}

Export-ModuleMember -Function Parse-Args, Get-AnsibleParam, Exit-Json, Fail-Json
} | Import-Module -DisableNameChecking

# ---- module_util Ansible.ModuleUtils.Casing ----
New-Module -Name 'Ansible.ModuleUtils.Casing' -ScriptBlock {
Function ConvertTo-TitleCase($Text) {
    return $Text.Substring(0, 1).ToUpper() + $Text.Substring(1)
}

Export-ModuleMember -Function ConvertTo-TitleCase
} | Import-Module -DisableNameChecking

# ---- module_util Ansible.ModuleUtils.Greeting ----
New-Module -Name 'Ansible.ModuleUtils.Greeting' -ScriptBlock {
# sandball: satisfied by the assembly: Requires -Module Ansible.ModuleUtils.Casing

Function Get-Greeting($Name) {
    return "Hello, $(ConvertTo-TitleCase $Name)!"
}

Export-ModuleMember -Function Get-Greeting
} | Import-Module -DisableNameChecking

# ---- module hello ----
# An example new-style PowerShell module: greets `name`. sandball assembles it (Module
# Replacer for PowerShell) but does not run PowerShell; see README.md in this folder.

# sandball: POWERSHELL_COMMON satisfied by the assembly
# sandball: satisfied by the assembly: Requires -Module Ansible.ModuleUtils.Greeting

$params = Parse-Args $args -supports_check_mode $true
$name = Get-AnsibleParam -obj $params -name "name" -type "str" -failifempty $true

Exit-Json @{ changed = $false; greeting = (Get-Greeting -Name $name) }
