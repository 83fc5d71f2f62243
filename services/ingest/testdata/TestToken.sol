// SPDX-License-Identifier: MIT
// A plain ERC-20 for the ingest integration test against geth --dev. Compiled with solc 0.8.28:
//   npm install --prefix /tmp/solc solc@0.8.28
//   /tmp/solc/node_modules/.bin/solcjs --optimize --bin --abi -o out TestToken.sol
// and committed as TestToken.bin / TestToken.abi.
pragma solidity 0.8.28;

contract TestToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 a = allowance[from][msg.sender];
        require(a >= value, "allowance");
        allowance[from][msg.sender] = a - value;
        _move(from, to, value);
        return true;
    }

    // batch pays several recipients in one transaction (several Transfer logs).
    function batch(address[] calldata to, uint256[] calldata value) external {
        require(to.length == value.length, "lengths");
        for (uint256 i = 0; i < to.length; i++) {
            _move(msg.sender, to[i], value[i]);
        }
    }

    function _move(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
