#Requires -Module Ansible.ModuleUtils.Casing

Function Get-Greeting($Name) {
    return "Hello, $(ConvertTo-TitleCase $Name)!"
}

Export-ModuleMember -Function Get-Greeting
